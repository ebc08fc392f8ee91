//! Limits in a profile: the parsers for sizes, durations and counts, and a parsed value
//! with the line it was set on.
#![forbid(unsafe_code)]

use super::Profile;
use crate::capability::{LimitOrigins, Origin};

/// A key of a profile's `[limits]` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum LimitKey {
    Timeout,
    Output,
    Memory,
    Processes,
    FileSize,
    CpuTime,
    OpenFiles,
    TmpSize,
}

impl LimitKey {
    /// The key as a profile writes it.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            LimitKey::Timeout => "timeout",
            LimitKey::Output => "output",
            LimitKey::Memory => "memory",
            LimitKey::Processes => "processes",
            LimitKey::FileSize => "file_size",
            LimitKey::CpuTime => "cpu_time",
            LimitKey::OpenFiles => "open_files",
            LimitKey::TmpSize => "tmp_size",
        }
    }
}

/// One limit with where it was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LimitValue {
    pub(super) value: Option<u64>,
    pub(super) line: usize,
}

impl Profile {
    /// Where each limit of the resolved set was set; the private tmpfs size, when `tmp_size`
    /// is not set, is half of `memory` and comes from there.
    pub(super) fn limit_origins(&self) -> LimitOrigins {
        let o = |k: LimitKey| self.limit_origin(k);
        LimitOrigins {
            timeout_ms: o(LimitKey::Timeout),
            output_bytes: o(LimitKey::Output),
            memory_bytes: o(LimitKey::Memory),
            processes: o(LimitKey::Processes),
            file_size_bytes: o(LimitKey::FileSize),
            cpu_seconds: o(LimitKey::CpuTime),
            open_files: o(LimitKey::OpenFiles),
            tmp_bytes: o(LimitKey::TmpSize).or_else(|| o(LimitKey::Memory)),
        }
    }

    /// Where a limit was set.
    fn limit_origin(&self, key: LimitKey) -> Option<Origin> {
        self.limits.get(&key).map(|(v, src)| Origin {
            source: src.as_str().into(),
            line: v.line,
            key: format!("limits.{}", key.as_str()).into(),
        })
    }

    /// A limit's value: `None` when unlimited or not set.
    pub(super) fn limit(&self, key: LimitKey) -> Option<u64> {
        self.limits.get(&key).and_then(|(v, _)| v.value)
    }
}

/// Parses one limit's value: `None` is unlimited, `Err` names what is wrong.
pub(super) type LimitParser = fn(&toml::Value) -> Result<Option<u64>, String>;

/// `N` followed by a unit, from a string such as `"512MiB"` or `"10m"`: `N` times the
/// multiplier `unit` gives for the rest, or an error naming what is wrong.
fn with_unit(
    s: &str,
    what: &str,
    unit: fn(&str) -> Option<u64>,
    units: &str,
) -> Result<Option<u64>, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, u) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("`{s}` is not a {what}"))?;
    let mult = unit(u).ok_or_else(|| format!("unknown {what} unit `{u}` (use {units})"))?;
    n.checked_mul(mult)
        .map(Some)
        .ok_or_else(|| format!("`{s}` is too large"))
}

pub(super) fn parse_size(v: &toml::Value) -> Result<Option<u64>, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(Some(*i as u64)),
        toml::Value::String(s) if s == "unlimited" => Ok(None),
        toml::Value::String(s) => with_unit(
            s,
            "size",
            |u| match u.trim() {
                "" | "B" => Some(1),
                "K" | "KiB" | "k" => Some(1 << 10),
                "M" | "MiB" => Some(1 << 20),
                "G" | "GiB" => Some(1 << 30),
                "T" | "TiB" => Some(1 << 40),
                _ => None,
            },
            "B, KiB, MiB, GiB, TiB",
        ),
        _ => Err(
            "expected a non-negative integer, a string like \"512MiB\", or \"unlimited\"".into(),
        ),
    }
}

pub(super) fn parse_duration_secs(v: &toml::Value) -> Result<Option<u64>, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(Some(*i as u64)),
        toml::Value::String(s) if s == "unlimited" => Ok(None),
        toml::Value::String(s) => with_unit(
            s,
            "duration",
            |u| match u {
                "" | "s" => Some(1),
                "m" => Some(60),
                "h" => Some(3600),
                _ => None,
            },
            "s, m, h",
        ),
        _ => Err("expected seconds as an integer, a string like \"10m\", or \"unlimited\"".into()),
    }
}

pub(super) fn parse_count(v: &toml::Value) -> Result<Option<u64>, String> {
    match v {
        toml::Value::Integer(i) if *i > 0 => Ok(Some(*i as u64)),
        toml::Value::String(s) if s == "unlimited" => Ok(None),
        _ => Err("expected a positive integer or \"unlimited\"".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> toml::Value {
        toml::Value::String(v.into())
    }

    #[test]
    fn sizes_and_durations_scale_and_refuse_overflow() {
        assert_eq!(parse_size(&s("2GiB")), Ok(Some(2 << 30)));
        assert_eq!(parse_size(&s("512 MiB")), Ok(Some(512 << 20)));
        assert_eq!(parse_duration_secs(&s("10m")), Ok(Some(600)));
        assert_eq!(parse_duration_secs(&s("unlimited")), Ok(None));
        assert!(parse_duration_secs(&s("18446744073709551615h")).is_err());
        assert!(parse_size(&s("18446744073709551615TiB")).is_err());
        assert!(parse_duration_secs(&s("5GiB")).is_err());
    }
}
