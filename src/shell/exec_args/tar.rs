//! `tar`: options that run a command, extraction and archive writes.

use super::Ctx;
use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::words::Word;

pub(super) fn tar(j: &mut Judge, c: &Ctx<'_, '_, '_>, args: &[Word]) {
    let first = args.first().map(|a| a.value.as_str()).unwrap_or("");
    let mut extract = false;
    let mut create = false;
    if !first.starts_with('-') {
        extract = first.contains('x');
        create = first.contains('c') || first.contains('r') || first.contains('u');
    }
    let mut file: Option<&Word> = None;
    let mut dir: Option<&Word> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        i += 1;
        if v.starts_with("--to-command")
            || v.starts_with("--checkpoint-action")
            || v.starts_with("--use-compress-program")
            || v == "-I"
            || v.starts_with("--info-script")
            || v.starts_with("--new-volume-script")
            || v == "-F"
            || v.starts_with("--rsh-command")
        {
            j.raise(
                Class::Opaque,
                format!("[shell.exec-arg.tar] `tar {v}` runs a command"),
            );
        }
        if v == "-x"
            || v == "--extract"
            || v == "--get"
            || (v.starts_with('-') && !v.starts_with("--") && v.contains('x'))
        {
            extract = true;
        }
        if v == "-c"
            || v == "--create"
            || v == "-r"
            || v == "--append"
            || (v.starts_with('-') && !v.starts_with("--") && v.contains('c'))
        {
            create = true;
        }
        if v == "-C" || v == "--directory" {
            dir = args.get(i);
        }
        if v == "-f"
            || v == "--file"
            || (v.starts_with('-') && !v.starts_with("--") && v.ends_with('f'))
            || (!v.starts_with('-') && i == 1 && v.ends_with('f'))
        {
            file = args.get(i);
        }
    }
    if extract {
        let target = dir.cloned().unwrap_or_else(|| Word::literal("."));
        j.write(&target, c.cmd.cwd, c.w.ctx, "tar extraction into");
    }
    if create && let Some(f) = file.filter(|f| f.value != "-") {
        j.write(f, c.cmd.cwd, c.w.ctx, "tar archive");
    }
}
