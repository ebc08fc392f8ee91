//! Compile a [`SeccompPlan`] into BPF programs with seccompiler, in the parent.
use crate::plan::SeccompPlan;
use seccompiler::{BpfProgram, sock_filter};
use serde_json::json;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeccompError {
    #[error("seccomp filter does not compile: {source}")]
    Compile {
        #[source]
        source: seccompiler::Error,
    },
    #[error("unknown syscall `{name}` in syscalls.deny")]
    UnknownSyscall { name: String },
    #[error("unknown socket family `{name}`")]
    UnknownFamily { name: String },
}

const CLONE_NS_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWCGROUP as u64,
    0x80, // CLONE_NEWTIME
];

fn family(name: &str) -> Option<u64> {
    Some(match name {
        "AF_UNIX" => libc::AF_UNIX,
        "AF_INET" => libc::AF_INET,
        "AF_INET6" => libc::AF_INET6,
        "AF_NETLINK" => libc::AF_NETLINK,
        _ => return None,
    } as u64)
}

fn ioctl(name: &str) -> Option<u64> {
    match name {
        "TIOCSTI" => Some(libc::TIOCSTI),
        "TIOCLINUX" => Some(0x541C),
        _ => None,
    }
}

fn compile(filter: serde_json::Value) -> Result<BpfProgram, SeccompError> {
    let doc = json!({ "f": filter });
    let text = doc.to_string();
    let mut map = seccompiler::compile_from_json(
        text.as_bytes(),
        std::env::consts::ARCH
            .try_into()
            .map_err(|e| SeccompError::Compile {
                source: seccompiler::Error::Backend(e),
            })?,
    )
    .map_err(|source| match &source {
        seccompiler::Error::JsonFrontend(e) if e.to_string().contains("syscall") => {
            SeccompError::UnknownSyscall {
                name: e.to_string(),
            }
        }
        _ => SeccompError::Compile { source },
    })?;
    Ok(map.remove("f").unwrap_or_default())
}

/// The x32 guard seccompiler does not emit: on x86_64, any syscall number with
/// `__X32_SYSCALL_BIT` set answers EPERM. (A foreign arch is killed by seccompiler's filter.)
fn x32_guard() -> BpfProgram {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const X32_BIT: u32 = 0x4000_0000;
    let errno = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    vec![
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 4,
        }, // arch
        sock_filter {
            code: JEQ_K,
            jt: 0,
            jf: 3,
            k: AUDIT_ARCH_X86_64,
        },
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        }, // nr
        sock_filter {
            code: JGE_K,
            jt: 0,
            jf: 1,
            k: X32_BIT,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: errno,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ]
}

/// All programs to install, in order. The kernel runs every one; the strictest answer wins.
pub fn compile_plan(plan: &SeccompPlan) -> Result<Vec<BpfProgram>, SeccompError> {
    let mut rules: Vec<serde_json::Value> = plan
        .denied
        .iter()
        .map(|s| json!({ "syscall": s }))
        .collect();
    if plan.deny_namespace_clone {
        for f in CLONE_NS_FLAGS {
            rules.push(json!({"syscall": "clone", "args": [{"index": 0, "type": "qword", "op": {"masked_eq": f}, "val": f}]}));
        }
    }
    for name in &plan.deny_ioctls {
        let v = ioctl(name).ok_or_else(|| SeccompError::UnknownFamily { name: name.clone() })?;
        rules.push(json!({"syscall": "ioctl", "args": [{"index": 1, "type": "dword", "op": "eq", "val": v}]}));
    }
    let eperm = compile(
        json!({"mismatch_action": "allow", "match_action": {"errno": libc::EPERM}, "filter": rules}),
    )?;

    let mut fam_conds = Vec::new();
    for f in &plan.socket_families {
        let v = family(f).ok_or_else(|| SeccompError::UnknownFamily { name: f.clone() })?;
        fam_conds.push(json!({"index": 0, "type": "dword", "op": "ne", "val": v}));
    }
    let sockets = compile(json!({
        "mismatch_action": "allow",
        "match_action": {"errno": libc::EAFNOSUPPORT},
        "filter": [{"syscall": "socket", "args": fam_conds}],
    }))?;
    let mut progs = vec![eperm, sockets];
    if plan.clone3_enosys {
        progs.push(compile(json!({"mismatch_action": "allow", "match_action": {"errno": libc::ENOSYS}, "filter": [{"syscall": "clone3"}]}))?);
    }
    if plan.block_x32_and_i386 && cfg!(target_arch = "x86_64") {
        progs.push(x32_guard());
    }
    Ok(progs)
}
