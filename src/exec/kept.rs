//! Plans kept for the calls that follow. A session (`sbx serve`, `sbx mcp`) runs many commands
//! with the same profile, workspace and narrowing, and making each call's plan afresh
//! (expanding globs, intersecting hundreds of denied paths, asking the file system about each
//! of them) is most of what a warm call costs beyond its process tree.
//!
//! A plan is a pure function of its inputs (the profile, the variables, the host, the
//! narrowing) and of the answers the file system gave while it was made. A kept plan is
//! therefore reused only for the same inputs, and only while every question its making asked
//! (a glob's matches, what is at a path, a directory's entries, a git config's text, one
//! variable) gets the answer it got: asked again, or vouched for by the unchanged stamp of the
//! directory or file that decides it ([`super::stamp`]). A fresh plan would then ask the same
//! questions in the same order and come out the same. A secret file that appears between two
//! calls changes an answer, and the next call plans afresh.
#![forbid(unsafe_code)]

use super::stamp::{Looks, Pass, Stamp, Witness};
use crate::capability::CapabilitySet;
use crate::host::{Host, NameCase};
use crate::plan::{DirLister, RealFs, SandboxPlan};
use crate::profile::{FileKind, Files, RealFiles, Vars};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How many plans a sandbox keeps (a session uses one per workspace and narrowing).
const KEEP: usize = 4;

/// One question planning asked of the machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
enum Question {
    Glob(String),
    Kind(PathBuf),
    Read(PathBuf),
    Var(String),
    List(PathBuf),
    IsDir(PathBuf),
    Exists(PathBuf),
    IsSymlink(PathBuf),
    ReadLink(PathBuf),
    NameCase(PathBuf),
    NameCaseIn(PathBuf),
    Searchable(PathBuf),
}

/// The answer it got.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Answer {
    Paths(Vec<PathBuf>),
    Kind(Option<FileKind>),
    /// A file's text, as its digest: a plan written down holds no file's text.
    Text(Option<Digest>),
    /// A variable's value, as its digest: a plan written down holds no value.
    Var(Option<Digest>),
    Yes(bool),
    Link(Option<PathBuf>),
    Names(NameCase),
}

/// One question, its answer, and what decides it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Item {
    question: Question,
    answer: Answer,
    /// Derived from the question and answer: not written down ([`Asked::restored`]).
    #[serde(skip)]
    witness: Option<Witness>,
}

impl Item {
    /// The path, when the answer is that nothing is there.
    fn absent(&self) -> Option<&Path> {
        match (&self.question, &self.answer) {
            (Question::Exists(p), Answer::Yes(false)) | (Question::Kind(p), Answer::Kind(None)) => {
                Some(p)
            }
            _ => None,
        }
    }
}

/// The witness that vouched for an answer when it was last confirmed, with its stamp then.
type Confirmed = Option<(Witness, Stamp)>;

/// Every question one plan's making asked, with its answer, and what last confirmed each.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Asked {
    items: Vec<Item>,
    confirmed: Mutex<Vec<Confirmed>>,
}

/// A question to ask again, and what may vouch for its answer from then on: a witness with
/// its stamp now and, for an absent path, the entry that must be absent under that witness.
struct Again {
    item: usize,
    vouch: Confirmed,
    absent: Option<PathBuf>,
}

impl Asked {
    fn new(asked: HashMap<Question, Answer>) -> Self {
        let items: Vec<Item> = asked
            .into_iter()
            .map(|(question, answer)| Item {
                witness: witness(&question, &answer),
                question,
                answer,
            })
            .collect();
        let confirmed = Mutex::new(vec![None; items.len()]);
        Self { items, confirmed }
    }

    /// `self` as read back from where it was written down, each question's witness derived
    /// again.
    pub(super) fn restored(mut self) -> Self {
        for item in &mut self.items {
            item.witness = witness(&item.question, &item.answer);
        }
        self
    }

    /// Whether the machine still answers every question the same (`None` when not), and
    /// whether what vouches for the answers changed with this check (the stamps taken from
    /// `looks`).
    pub(super) fn recheck(&self, looks: &Looks) -> Option<bool> {
        let before = self.confirmed.lock().ok()?.clone();
        self.asked_again_in(looks)?;
        let after = self.confirmed.lock().ok()?;
        Some(*after != before)
    }

    /// What a check needs while nothing that vouched for an answer has changed; `settled`
    /// when the last check confirmed nothing anew.
    pub(super) fn summary(&self, settled: bool) -> Option<Summary> {
        let confirmed = self.confirmed.lock().ok()?;
        let mut stamps: Vec<(Witness, Stamp)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut open = Vec::new();
        for (item, c) in self.items.iter().zip(confirmed.iter()) {
            match c {
                Some(ws) if seen.insert(ws.clone()) => stamps.push(ws.clone()),
                Some(_) => {}
                None => open.push((item.question.clone(), item.answer.clone())),
            }
        }
        Some(Summary {
            stamps,
            open,
            settled,
        })
    }

    /// [`Asked::asked_again_in`] with looks of its own.
    #[cfg(test)]
    pub(super) fn asked_again(&self) -> Option<usize> {
        self.asked_again_in(&Looks::default())
    }

    /// How many questions had to be asked again, or `None` when an answer changed. A question
    /// whose witness has the stamp it had when the answer was last confirmed is not asked
    /// again. The others are, after every stamp is taken (so that each answer is as new as the
    /// stamp that will vouch for it), by one fresh view of the file system, as planning asks.
    /// An absent path is vouched for by its nearest existing ancestor, once the entry below
    /// that ancestor is seen absent too. The stamps are taken from `looks`.
    pub(super) fn asked_again_in(&self, looks: &Looks) -> Option<usize> {
        let Ok(mut confirmed) = self.confirmed.lock() else {
            return None;
        };
        let mut pass = Pass::begin_in(looks.clone());
        let mut again = Vec::new();
        for (i, item) in self.items.iter().enumerate() {
            if let Some((w, s)) = &confirmed[i]
                && pass.stamp(w).as_ref() == Some(s)
            {
                continue;
            }
            let (vouch, absent) = match item.absent() {
                Some(p) => pass.nearest(p),
                None => {
                    let w = item.witness.clone();
                    (w.and_then(|w| pass.stamp(&w).map(|s| (w, s))), None)
                }
            };
            again.push(Again {
                item: i,
                vouch,
                absent,
            });
        }
        let (files, fs) = shared_machine();
        let n = again.len();
        for a in again {
            let item = &self.items[a.item];
            if answer(&item.question, &files, &fs).as_ref() != Some(&item.answer) {
                return None;
            }
            let below_absent = a.absent.is_none_or(|p| !fs.exists(&p));
            confirmed[a.item] = a.vouch.filter(|_| below_absent);
        }
        Some(n)
    }

    /// How many questions there are.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.items.len()
    }
}

/// A kept plan's questions as a check sees them while nothing that vouched for an answer has
/// changed: each witness that vouched, with its stamp then, and the questions nothing vouched
/// for. It holds exactly when [`Asked::asked_again_in`] would skip every vouched question and
/// find every other answer unchanged.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Summary {
    stamps: Vec<(Witness, Stamp)>,
    open: Vec<(Question, Answer)>,
    /// Whether the last check confirmed nothing anew: what vouches now is all that can. A
    /// check of an unsettled plan asks the other questions again and confirms what it can.
    settled: bool,
}

impl Summary {
    /// Whether the last check confirmed nothing anew.
    pub(super) fn settled(&self) -> bool {
        self.settled
    }

    /// Whether every witness has its stamp and every other question its answer (the stamps
    /// taken from `looks`, all of them before any question is asked again).
    pub(super) fn holds(&self, looks: &Looks) -> bool {
        let mut pass = Pass::begin_in(looks.clone());
        if !self
            .stamps
            .iter()
            .all(|(w, s)| pass.stamp(w).as_ref() == Some(s))
        {
            return false;
        }
        let (files, fs) = shared_machine();
        self.open
            .iter()
            .all(|(q, a)| answer(q, &files, &fs).as_ref() == Some(a))
    }
}

/// A digest of a text or a value.
type Digest = [u8; 32];

pub(super) fn digest(bytes: &[u8]) -> Digest {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// What decides a question's answer, when one directory or file does.
fn witness(q: &Question, a: &Answer) -> Option<Witness> {
    let parent = |p: &Path| p.parent().map(|d| Witness::Entries(d.to_path_buf()));
    match q {
        // A link is replaced, not changed in place: its directory's entries change with it.
        Question::Kind(p)
        | Question::Exists(p)
        | Question::IsSymlink(p)
        | Question::ReadLink(p)
        | Question::NameCase(p) => parent(p),
        // Following a link: only "a directory" is kept by the directory it resolves to.
        Question::IsDir(p) => (*a == Answer::Yes(true)).then(|| Witness::Directory(p.clone())),
        Question::List(d) => Some(Witness::Entries(d.clone())),
        Question::Glob(pattern) => glob_dir(pattern).map(Witness::Entries),
        // Whichever entry is probed, the answer is the file system's: asked again each time
        // (one lookup), it drops the plan only when the verdict changes. A mode changes no
        // directory's entries: asked again each time. A file's text is read again each time
        // (a few small git configs): a write through a shared mapping changes it without
        // moving its times until the kernel writes it back.
        Question::Var(_)
        | Question::NameCaseIn(_)
        | Question::Searchable(_)
        | Question::Read(_) => None,
    }
}

/// The directory whose entries a glob with a wildcard in its last component only is matched
/// against (as `expand_glob` does it); `None` for other globs, asked again each time.
fn glob_dir(pattern: &str) -> Option<PathBuf> {
    let wild = |c: &str| c.contains(['*', '?', '[']);
    let (dir, last) = pattern.rsplit_once('/')?;
    if !wild(last) || wild(dir) {
        return None;
    }
    Some(PathBuf::from(if dir.is_empty() { "/" } else { dir }))
}

/// The answer the machine gives now; `None` for a glob that no longer parses.
fn answer(q: &Question, files: &dyn Files, fs: &dyn DirLister) -> Option<Answer> {
    Some(match q {
        Question::Glob(p) => Answer::Paths(files.glob(p).ok()?),
        Question::Kind(p) => Answer::Kind(files.kind(p)),
        Question::Read(p) => Answer::Text(files.read(p).map(|t| digest(t.as_bytes()))),
        Question::Var(n) => Answer::Var(files.var(n).map(|v| digest(v.as_bytes()))),
        Question::List(p) => Answer::Paths(fs.list(p)),
        Question::IsDir(p) => Answer::Yes(fs.is_dir(p)),
        Question::Exists(p) => Answer::Yes(fs.exists(p)),
        Question::IsSymlink(p) => Answer::Yes(fs.is_symlink(p)),
        Question::ReadLink(p) => Answer::Link(files.read_link(p)),
        Question::NameCase(p) => Answer::Names(fs.name_case(p)),
        Question::NameCaseIn(p) => Answer::Names(as_planned(fs.name_case_in(p))),
        Question::Searchable(p) => Answer::Yes(fs.searchable(p)),
    })
}

/// A verdict as planning acts on it: a tree that cannot tell (no entry to probe yet) plans as
/// one where case matters, so the first file made in an empty workspace keeps the plan.
fn as_planned(c: NameCase) -> NameCase {
    match c {
        NameCase::Untold => NameCase::Exact,
        NameCase::Exact | NameCase::FoldedByKernel | NameCase::FoldedBeneath { .. } => c,
    }
}

/// The real machine, as resolving and planning see it, writing down what they ask.
pub(super) struct Recorder {
    fs: RealFs,
    files: RealFiles,
    asked: RefCell<HashMap<Question, Answer>>,
}

impl Default for Recorder {
    /// Resolving and planning, one right after the other, look at each path once.
    fn default() -> Self {
        let (files, fs) = shared_machine();
        Self {
            fs,
            files,
            asked: RefCell::default(),
        }
    }
}

/// The real machine for one moment's questions, each path looked at once.
fn shared_machine() -> (RealFiles, RealFs) {
    let looks = std::rc::Rc::new(crate::lookups::Lookups::default());
    (
        RealFiles::sharing(std::rc::Rc::clone(&looks)),
        RealFs::sharing(looks),
    )
}

impl Recorder {
    fn note(&self, q: Question, a: Answer) {
        self.asked.borrow_mut().entry(q).or_insert(a);
    }

    /// What was asked.
    pub(super) fn into_asked(self) -> Asked {
        Asked::new(self.asked.into_inner())
    }
}

impl Files for Recorder {
    fn glob(&self, pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError> {
        let found = self.files.glob(pattern)?;
        self.note(Question::Glob(pattern.into()), Answer::Paths(found.clone()));
        Ok(found)
    }
    fn kind(&self, path: &Path) -> Option<FileKind> {
        let k = self.files.kind(path);
        self.note(Question::Kind(path.into()), Answer::Kind(k));
        k
    }
    fn read(&self, path: &Path) -> Option<String> {
        let t = self.files.read(path);
        let d = t.as_deref().map(|t| digest(t.as_bytes()));
        self.note(Question::Read(path.into()), Answer::Text(d));
        t
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        let t = self.files.read_link(path);
        self.note(Question::ReadLink(path.into()), Answer::Link(t.clone()));
        t
    }
    fn var(&self, name: &str) -> Option<OsString> {
        let v = self.files.var(name);
        let d = v.as_deref().map(|v| digest(v.as_bytes()));
        self.note(Question::Var(name.into()), Answer::Var(d));
        v
    }
}

impl DirLister for Recorder {
    fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let v = self.fs.list(dir);
        self.note(Question::List(dir.into()), Answer::Paths(v.clone()));
        v
    }
    fn is_dir(&self, path: &Path) -> bool {
        let y = self.fs.is_dir(path);
        self.note(Question::IsDir(path.into()), Answer::Yes(y));
        y
    }
    fn exists(&self, path: &Path) -> bool {
        let y = self.fs.exists(path);
        self.note(Question::Exists(path.into()), Answer::Yes(y));
        y
    }
    fn is_symlink(&self, path: &Path) -> bool {
        let y = self.fs.is_symlink(path);
        self.note(Question::IsSymlink(path.into()), Answer::Yes(y));
        y
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        Files::read_link(self, path)
    }
    fn name_case(&self, entry: &Path) -> NameCase {
        let c = self.fs.name_case(entry);
        self.note(Question::NameCase(entry.into()), Answer::Names(c.clone()));
        c
    }
    fn name_case_in(&self, dir: &Path) -> NameCase {
        let c = self.fs.name_case_in(dir);
        let planned = as_planned(c.clone());
        self.note(Question::NameCaseIn(dir.into()), Answer::Names(planned));
        c
    }
    fn searchable(&self, dir: &Path) -> bool {
        let y = self.fs.searchable(dir);
        self.note(Question::Searchable(dir.into()), Answer::Yes(y));
        y
    }
}

/// What a plan was made from, besides the profile (the sandbox's own).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Inputs {
    pub(super) vars: Vars,
    pub(super) host: Host,
    pub(super) narrow: Option<CapabilitySet>,
}

/// One kept plan: its inputs, the capability set it was made from, the plan, and what its
/// making asked.
pub(super) struct Entry {
    pub(super) inputs: Inputs,
    pub(super) caps: Arc<CapabilitySet>,
    pub(super) plan: Arc<SandboxPlan>,
    pub(super) asked: Asked,
    /// The protected names below the workspace root the plan holds read-only.
    pub(super) below: Vec<crate::capability::PathEntry>,
    /// The questions' [`Summary`] once a check confirmed nothing anew: the next checks ask
    /// only what it holds, as a run reading a settled stored plan does.
    pub(super) settled: Mutex<Option<Summary>>,
}

impl Entry {
    /// Whether the machine still answers every question as when the plan was made (the
    /// stamps taken from `looks`): by the summary while it holds, else by every question.
    fn holds(&self, looks: &Looks) -> bool {
        let Ok(mut settled) = self.settled.lock() else {
            return false;
        };
        if settled.as_ref().is_some_and(|s| s.holds(looks)) {
            return true;
        }
        match self.asked.recheck(looks) {
            Some(changed) => {
                *settled = if changed {
                    None
                } else {
                    self.asked.summary(true)
                };
                true
            }
            None => false,
        }
    }
}

/// The plans a sandbox keeps, newest last.
#[derive(Default)]
pub(super) struct Kept(Mutex<Vec<Arc<Entry>>>);

impl Kept {
    /// The kept set and plan for these inputs, when the machine still answers as it did
    /// (the stamps taken from `looks`). A plan that no longer holds is dropped.
    pub(super) fn find(
        &self,
        vars: &Vars,
        host: &Host,
        narrow: Option<&CapabilitySet>,
        looks: &Looks,
    ) -> Option<super::Planned> {
        let entry = self.entry(vars, host, narrow)?;
        if entry.holds(looks) {
            return Some((entry.caps.clone(), entry.plan.clone()));
        }
        if let Ok(mut v) = self.0.lock() {
            v.retain(|e| !Arc::ptr_eq(e, &entry));
        }
        None
    }

    /// The kept entry for these inputs, whether it holds or not.
    pub(super) fn entry(
        &self,
        vars: &Vars,
        host: &Host,
        narrow: Option<&CapabilitySet>,
    ) -> Option<Arc<Entry>> {
        let same = |e: &Entry| {
            e.inputs.vars == *vars && e.inputs.host == *host && e.inputs.narrow.as_ref() == narrow
        };
        self.0.lock().ok()?.iter().find(|e| same(e)).cloned()
    }

    /// Keep `entry`, in place of one with the same inputs, and drop the oldest beyond
    /// [`KEEP`].
    pub(super) fn keep(&self, entry: Entry) {
        if let Ok(mut v) = self.0.lock() {
            v.retain(|e| e.inputs != entry.inputs);
            v.push(Arc::new(entry));
            if v.len() > KEEP {
                v.remove(0);
            }
        }
    }
}

/// A file's text is read again by every check, whatever its times say: a write through a
/// shared mapping changes it and leaves them until the kernel writes the pages back.
#[test]
fn nothing_vouches_for_a_files_text() {
    let config = PathBuf::from("/w/.git/config");
    let text = Answer::Text(Some(digest(b"[core]\n\thooksPath = my-hooks\n")));
    assert_eq!(witness(&Question::Read(config.clone()), &text), None);
    // While what is at a path is vouched for by its directory's entries.
    let kind = Answer::Kind(Some(FileKind::File));
    let entries = Some(Witness::Entries(PathBuf::from("/w/.git")));
    assert_eq!(witness(&Question::Kind(config), &kind), entries);
}
