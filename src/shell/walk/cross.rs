//! Rules that need more than one segment: pipelines into interpreters,
//! exfiltration, and running a file downloaded earlier on the same line.

use super::{Cwd, Scope, Seg, Walker};
use crate::shell::paths;
use crate::shell::{Class, tables, tree_links};
use rable::Node;
use std::path::PathBuf;

impl Walker<'_> {
    pub(super) fn pipeline(&mut self, commands: &[Node], scope: &mut Scope) {
        let mut stages: Vec<(usize, usize)> = Vec::new();
        for c in commands {
            let start = self.out.len();
            let mut stage_scope = scope.clone();
            self.node(c, &mut stage_scope);
            stages.push((start, self.out.len()));
        }
        let any = |w: &Walker<'_>, (a, b): (usize, usize), f: &dyn Fn(&Seg) -> bool| {
            w.out.get(a..b).is_some_and(|s| s.iter().any(f))
        };
        self.xargs_input(&stages, scope);
        let network_anywhere = stages.iter().any(|&r| any(self, r, &|s| s.t.network));
        for (j, &stage) in stages.iter().enumerate() {
            if !any(self, stage, &|s| s.t.stdin_code) {
                continue;
            }
            let earlier = stages.get(..j).unwrap_or(&[]);
            let text = self
                .out
                .get(stage.0)
                .map(|s| s.seg.text.clone())
                .unwrap_or_default();
            if network_anywhere {
                self.push_class(
                    &text,
                    Class::Malicious,
                    "[shell.malicious.download-exec] network data and an interpreter reading commands share a pipeline".into(),
                    &scope.via,
                );
            } else if earlier.iter().any(|&r| any(self, r, &|s| s.t.decoder)) {
                self.push_class(
                    &text,
                    Class::Malicious,
                    "[shell.malicious.decode-exec] decoded data piped into an interpreter".into(),
                    &scope.via,
                );
            } else if let Some(prev) = earlier.last() {
                let printed = self
                    .out
                    .get(prev.0..prev.1)
                    .and_then(|s| s.first())
                    .and_then(|s| s.t.prints.clone());
                if let Some(code) = printed {
                    let mut inner = Scope {
                        cwd: scope.cwd.clone(),
                        depth: scope.depth + 1,
                        via: "piped into a shell".into(),
                        vars: super::Vars::new(),
                    };
                    self.source(&code, &mut inner);
                }
            }
        }
    }

    /// An `xargs` reader takes its paths from the stage before it: literal text an `echo`
    /// prints is read like arguments written out; paths a lister prints stay under the roots
    /// it was checked for. Anything else is left to `cross_rules`.
    fn xargs_input(&mut self, stages: &[(usize, usize)], scope: &Scope) {
        for pair in stages.windows(2) {
            let [prev, stage] = pair else { continue };
            let Some((producer, trees)) = self
                .out
                .get(prev.0)
                .map(|s| (s.t.clone(), s.seg.trees.clone()))
            else {
                continue;
            };
            if producer.prints.is_none() && !producer.lists_paths {
                continue;
            }
            let mut printed: Vec<PathBuf> = producer
                .prints
                .iter()
                .flat_map(|t| t.split_whitespace())
                .flat_map(|w| words_at(w, &scope.cwd))
                .collect();
            // A listed link that leads out of the listed trees is opened where it leads.
            match tree_links::listed(&producer.lists_links, &trees, &scope.cwd) {
                Ok(links) => printed.extend(
                    links
                        .iter()
                        .flat_map(|l| words_at(&l.to_string_lossy(), &scope.cwd)),
                ),
                Err(e) => {
                    for s in self.out.get_mut(stage.0..stage.1).unwrap_or(&mut []) {
                        if s.t.xargs_reader {
                            s.t.xargs_reader = false;
                            opaque(s, tree_links::unknown(&e, "the `xargs` reader"));
                        }
                    }
                    continue;
                }
            }
            let options = producer
                .prints
                .iter()
                .flat_map(|t| t.split_whitespace())
                .any(|w| w.starts_with('-'));
            for s in self.out.get_mut(stage.0..stage.1).unwrap_or(&mut []) {
                if s.t.xargs_reader && options {
                    // Options it is fed change what it does: leave it to `cross_rules`.
                    continue;
                }
                if s.t.xargs_reader {
                    s.t.xargs_reader = false;
                    // A recursive reader (it has trees) walks what it is given.
                    let walks = !s.seg.trees.is_empty();
                    for p in &printed {
                        if !s.seg.reads.contains(p) {
                            s.seg.reads.push(p.clone());
                        }
                        if walks && !s.seg.trees.contains(p) {
                            s.seg.trees.push(p.clone());
                        }
                    }
                }
            }
        }
    }

    /// Rules over the whole command line.
    pub(super) fn cross_rules(&mut self) {
        for s in self.out.iter_mut().filter(|s| s.t.xargs_reader) {
            let why = format!(
                "[shell.xargs.paths] `{}` reads paths that are only known when it runs",
                s.seg.text
            );
            opaque(s, why);
        }
        self.stale_project_files();
        let network = self.out.iter().any(|s| s.t.network);
        let secret = self.out.iter().find(|s| s.t.reads_secret || s.t.dumps_env);
        if let (true, Some(s)) = (network, secret) {
            let text = s.seg.text.clone();
            self.push_class(
                &text,
                Class::Malicious,
                "[shell.malicious.exfiltration] secrets or the environment are read on a command line that uses the network".into(),
                "",
            );
        }
        let mut downloads: Vec<String> = Vec::new();
        let mut hits: Vec<String> = Vec::new();
        for s in &self.out {
            let runs = matches!(
                s.seg.class,
                Class::ScriptRun
                    | Class::InlineCode
                    | Class::Opaque
                    | Class::Unknown
                    | Class::Destructive
            ) || s
                .seg
                .argv
                .iter()
                .any(|a| tables::SHELLS.contains(&a.as_str()));
            if runs
                && s.seg.argv.iter().any(|a| {
                    let base = a.rsplit('/').next().unwrap_or(a);
                    downloads.iter().any(|d| d == base)
                })
            {
                hits.push(s.seg.text.clone());
            }
            if let Some(d) = &s.t.download {
                downloads.push(d.clone());
            }
        }
        for text in hits {
            self.push_class(
                &text,
                Class::Malicious,
                "[shell.malicious.download-exec] runs a file downloaded earlier on the same command line".into(),
                "",
            );
        }
    }
}

impl Walker<'_> {
    /// A segment judged by project files as they are now (see `shell::project`) beside another
    /// that may write files: that one can plant them first (`git switch b && cargo metadata`,
    /// where branch `b` holds a `.cargo/config.toml`), or, in a loop, in between.
    fn stale_project_files(&mut self) {
        let writes = |s: &Seg| {
            let class = !matches!(s.seg.class, Class::ReadOnly | Class::SecretRead);
            let paths = !s.seg.writes.is_empty() || !s.seg.write_patterns.is_empty();
            (class && !s.t.rewrites_only) || paths
        };
        let writers: Vec<usize> = (0..self.out.len())
            .filter(|&i| self.out.get(i).is_some_and(writes))
            .collect();
        for (i, s) in self.out.iter_mut().enumerate() {
            if s.t.project_files && writers.iter().any(|&w| w != i) {
                let why = format!(
                    "[shell.project-config.stale] `{}` reads project files that another command \
                     on the line may write first",
                    s.seg.text
                );
                opaque(s, why);
            }
        }
    }
}

/// A finding on `s`, which makes it opaque when it was allowed.
fn opaque(s: &mut Seg, why: String) {
    if s.seg.findings.len() < 8 {
        s.seg.findings.push(why.clone());
    }
    if s.seg.verdict == crate::decision::Decision::Allow {
        s.seg.class = Class::Opaque;
        s.seg.verdict = crate::decision::Decision::Ask;
        s.seg.reason = why;
    }
}

/// A printed word as a path from each candidate directory.
fn words_at(word: &str, cwd: &Cwd) -> Vec<PathBuf> {
    if word.starts_with('/') {
        return vec![paths::resolve(word, std::path::Path::new("/"))];
    }
    cwd.iter()
        .flatten()
        .map(|c| paths::resolve(word, c))
        .collect()
}
