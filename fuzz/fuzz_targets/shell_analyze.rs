//! Fuzz the shell parser and classifier: any input must produce an analysis
//! (no panic, no stack overflow) whose deciding segment exists and whose
//! verdict is the strictest of its segments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sbx::shell::{ShellContext, analyze};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let ctx = ShellContext {
        cwd: "/nonexistent-ws".into(),
        workspace: "/nonexistent-ws".into(),
        home: "/nonexistent-home".into(),
        writable: vec!["/tmp".into()],
    };
    let a = analyze(s, &ctx);
    if let Some(i) = a.deciding_segment {
        assert!(i < a.segments.len());
        assert!(a.segments.iter().all(|seg| seg.verdict <= a.verdict));
    }
});
