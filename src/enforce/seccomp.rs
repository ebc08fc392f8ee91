//! Compile a [`SeccompPlan`] into one BPF program with seccompiler, in the parent.
//!
//! seccompiler gives every rule of a filter the same action, so the plan's three actions
//! (EPERM for denied calls, EAFNOSUPPORT for socket families, ENOSYS for `clone3`) compile
//! to three programs, and the x32 guard it does not emit is written by hand. Rather than
//! install four filters, which costs four attaches at start and four program runs on every
//! system call, the programs are chained into one: each program's "allow" answer jumps to
//! the start of the next, so the first program that refuses decides and a call all of them
//! allow is allowed. That is the kernel's own rule for stacked filters when, as here, no
//! two programs refuse the same call differently.
use crate::plan::SeccompPlan;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use std::collections::BTreeMap;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeccompError {
    #[error("seccomp filter does not compile: {source}")]
    Compile {
        #[source]
        source: seccompiler::BackendError,
    },
    #[error("unknown syscall `{name}` in syscalls.deny")]
    UnknownSyscall { name: String },
    #[error("unknown socket family `{name}`")]
    UnknownFamily { name: String },
    #[error("unknown ioctl `{name}`")]
    UnknownIoctl { name: String },
    #[error("the seccomp program has {len} instructions; the kernel takes at most {max}")]
    TooLong { len: usize, max: usize },
}

impl From<seccompiler::BackendError> for SeccompError {
    fn from(source: seccompiler::BackendError) -> Self {
        Self::Compile { source }
    }
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

const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K
const BPF_JA: u16 = 0x05; // BPF_JMP | BPF_JA
/// The kernel's limit on a classic BPF program's length.
const BPF_MAXINSNS: usize = 4096;

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

/// The syscall number of `name` on the architecture sbx is built for.
pub fn syscall_number(name: &str) -> Option<i64> {
    name.parse::<syscalls::Sysno>()
        .ok()
        .map(|s| i64::from(s.id()))
}

fn nr(name: &str) -> Result<i64, SeccompError> {
    syscall_number(name).ok_or_else(|| SeccompError::UnknownSyscall { name: name.into() })
}

fn arch() -> Result<TargetArch, SeccompError> {
    Ok(std::env::consts::ARCH.try_into()?)
}

fn cond(
    index: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, SeccompError> {
    Ok(SeccompCondition::new(index, len, op, value)?)
}

fn program(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<BpfProgram, SeccompError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch()?,
    )?;
    Ok(filter.try_into()?)
}

/// The x32 guard seccompiler does not emit: on x86_64, any syscall number with
/// `__X32_SYSCALL_BIT` set answers EPERM. (A foreign arch is killed by seccompiler's filter.)
fn x32_guard() -> BpfProgram {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const X32_BIT: u32 = 0x4000_0000;
    let i = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        i(LD_W_ABS, 0, 0, 4), // arch
        i(JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        i(LD_W_ABS, 0, 0, 0), // nr
        i(JGE_K, 0, 1, X32_BIT),
        i(
            BPF_RET_K,
            0,
            0,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ),
        i(BPF_RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

/// Chain programs into one: in every program but the last, "allow" becomes a jump to the
/// instruction after that program, where the next one starts.
fn chain(programs: Vec<BpfProgram>) -> BpfProgram {
    let count = programs.len();
    let mut out = Vec::with_capacity(programs.iter().map(Vec::len).sum());
    for (n, mut prog) in programs.into_iter().enumerate() {
        if n + 1 < count {
            let len = prog.len();
            for (i, ins) in prog.iter_mut().enumerate() {
                if ins.code == BPF_RET_K && ins.k == libc::SECCOMP_RET_ALLOW {
                    *ins = sock_filter {
                        code: BPF_JA,
                        jt: 0,
                        jf: 0,
                        k: (len - 1 - i) as u32,
                    };
                }
            }
        }
        out.append(&mut prog);
    }
    out
}

/// Programs compiled in this process, by plan: each distinct plan is compiled once (a server
/// runs many calls under few plans).
static COMPILED: std::sync::Mutex<Vec<(SeccompPlan, BpfProgram)>> =
    std::sync::Mutex::new(Vec::new());

/// How many compiled plans [`program_for`] keeps.
const KEEP: usize = 8;

/// The program for `plan`, compiled on first use.
pub fn program_for(plan: &SeccompPlan) -> Result<BpfProgram, SeccompError> {
    if let Ok(done) = COMPILED.lock()
        && let Some((_, prog)) = done.iter().find(|(p, _)| p == plan)
    {
        return Ok(prog.clone());
    }
    let prog = compile_plan(plan)?;
    if let Ok(mut done) = COMPILED.lock() {
        if done.len() >= KEEP {
            done.remove(0);
        }
        done.push((plan.clone(), prog.clone()));
    }
    Ok(prog)
}

/// The one program to install.
pub fn compile_plan(plan: &SeccompPlan) -> Result<BpfProgram, SeccompError> {
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for name in &plan.denied {
        // An empty rule list matches the call whatever its arguments.
        denied.insert(nr(name)?, Vec::new());
    }
    let mut conditional = |name: &str, rule: SeccompRule| -> Result<(), SeccompError> {
        let n = nr(name)?;
        if let Some(rules) = denied.get_mut(&n) {
            if !rules.is_empty() {
                rules.push(rule);
            }
        } else {
            denied.insert(n, vec![rule]);
        }
        Ok(())
    };
    if plan.deny_namespace_clone {
        for &f in CLONE_NS_FLAGS {
            let c = cond(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(f), f)?;
            conditional("clone", SeccompRule::new(vec![c])?)?;
        }
    }
    for name in &plan.deny_ioctls {
        let v = ioctl(name).ok_or_else(|| SeccompError::UnknownIoctl { name: name.clone() })?;
        let c = cond(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, v)?;
        conditional("ioctl", SeccompRule::new(vec![c])?)?;
    }
    let mut programs = Vec::with_capacity(4);
    if plan.block_x32_and_i386 && cfg!(target_arch = "x86_64") {
        programs.push(x32_guard());
    }
    programs.push(program(denied, libc::EPERM)?);

    let mut families = Vec::new();
    for f in &plan.socket_families {
        let v = family(f).ok_or_else(|| SeccompError::UnknownFamily { name: f.clone() })?;
        families.push(cond(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, v)?);
    }
    let socket = if families.is_empty() {
        Vec::new()
    } else {
        vec![SeccompRule::new(families)?]
    };
    programs.push(program(
        BTreeMap::from([(nr("socket")?, socket)]),
        libc::EAFNOSUPPORT,
    )?);
    if plan.clone3_enosys {
        programs.push(program(
            BTreeMap::from([(nr("clone3")?, Vec::new())]),
            libc::ENOSYS,
        )?);
    }
    let program = chain(programs);
    if program.len() > BPF_MAXINSNS {
        return Err(SeccompError::TooLong {
            len: program.len(),
            max: BPF_MAXINSNS,
        });
    }
    Ok(program)
}

// The tests use x86_64 numbers and the x86_64 audit arch.
#[cfg(all(test, target_arch = "x86_64"))]
#[path = "seccomp_tests.rs"]
mod tests;
