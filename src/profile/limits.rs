//! Limits in a profile: the parsers for sizes, durations and counts, and a parsed value
//! with the line it was set on.
#![forbid(unsafe_code)]

/// One limit with where it was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LimitValue {
    pub(super) value: Option<u64>,
    pub(super) line: usize,
}

/// Parses one limit's value: `None` is unlimited, `Err` names what is wrong.
pub(super) type LimitParser = fn(&toml::Value) -> Result<Option<u64>, String>;

pub(super) fn parse_size(v: &toml::Value) -> Result<Option<u64>, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(Some(*i as u64)),
        toml::Value::String(s) if s == "unlimited" => Ok(None),
        toml::Value::String(s) => {
            let s = s.trim();
            let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
            let (num, unit) = s.split_at(split);
            let n: u64 = num.parse().map_err(|_| format!("`{s}` is not a size"))?;
            let mult: u64 = match unit.trim() {
                "" | "B" => 1,
                "K" | "KiB" | "k" => 1 << 10,
                "M" | "MiB" => 1 << 20,
                "G" | "GiB" => 1 << 30,
                "T" | "TiB" => 1 << 40,
                u => {
                    return Err(format!(
                        "unknown size unit `{u}` (use B, KiB, MiB, GiB, TiB)"
                    ));
                }
            };
            n.checked_mul(mult)
                .map(Some)
                .ok_or_else(|| format!("`{s}` is too large"))
        }
        _ => Err(
            "expected a non-negative integer, a string like \"512MiB\", or \"unlimited\"".into(),
        ),
    }
}

pub(super) fn parse_duration_secs(v: &toml::Value) -> Result<Option<u64>, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(Some(*i as u64)),
        toml::Value::String(s) if s == "unlimited" => Ok(None),
        toml::Value::String(s) => {
            let s = s.trim();
            let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
            let (num, unit) = s.split_at(split);
            let n: u64 = num
                .parse()
                .map_err(|_| format!("`{s}` is not a duration"))?;
            let mult = match unit {
                "" | "s" => 1,
                "m" => 60,
                "h" => 3600,
                u => return Err(format!("unknown duration unit `{u}` (use s, m, h)")),
            };
            Ok(Some(n * mult))
        }
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
