//! `sbx serve` keeps a call's plan for the calls that follow, and only while the file system
//! answers as it did: a secret that appears between two calls of one session is hidden in the
//! next call, while a plain file that appears at the same moment is read (so the read does not
//! fail for another reason), as root and as uid 65534. The directories are left to settle
//! first, so that the kept plan's questions are answered by their directories' stamps.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::session::Session;
use common::*;

const AWS: &str = "SENTINEL-KEPT-AWS-5e1d";
const MAVEN: &str = "SENTINEL-KEPT-M2-0b7c";
const GH: &str = "SENTINEL-KEPT-GH-41d0";
const PLAIN: &str = "SENTINEL-KEPT-PLAIN-88c3";

#[test]
fn a_secret_made_between_two_calls_of_a_session_is_hidden_in_the_next() {
    for user in users() {
        let s = Scratch::new(user);
        let read = "for f in .aws/credentials .m2/settings-x.xml .config/gh/hosts.yml \
                    later.txt; do cat \"$HOME/$f\" 2>/dev/null; echo \"|$f\"; done\n";
        std::fs::write(s.ws.join("read.sh"), read).unwrap();
        std::fs::create_dir_all(s.home.join(".m2")).unwrap();
        std::fs::create_dir_all(s.home.join(".config")).unwrap();
        s.chown_all();
        let mut serve = Session::start(&s, "Bash(sh ./read.sh)");
        // Calls before: the second runs on the plan the first kept; after a pause, the third
        // confirms its answers and stamps their directories, the fourth goes by the stamps.
        for id in ["1", "2", "3", "4"] {
            if id == "3" {
                std::thread::sleep(std::time::Duration::from_millis(1200));
            }
            let out = serve.call(id, "sh ./read.sh");
            assert!(out.contains("|later.txt"), "{}: {out}", s.label());
            assert!(!out.contains("SENTINEL"), "{}: {out}", s.label());
        }
        std::fs::create_dir_all(s.home.join(".aws")).unwrap();
        std::fs::write(s.home.join(".aws/credentials"), AWS).unwrap();
        std::fs::write(s.home.join(".m2/settings-x.xml"), MAVEN).unwrap();
        std::fs::create_dir_all(s.home.join(".config/gh")).unwrap();
        std::fs::write(s.home.join(".config/gh/hosts.yml"), GH).unwrap();
        std::fs::write(s.home.join("later.txt"), PLAIN).unwrap();
        s.chown_all();
        // Outside the sandbox all of them read back.
        let outside = stdout(&s.outside("sh ./read.sh"));
        for sentinel in [AWS, MAVEN, GH, PLAIN] {
            assert!(outside.contains(sentinel), "{}: {outside}", s.label());
        }
        let out = serve.call("5", "sh ./read.sh");
        assert!(out.contains(PLAIN), "{}: {out}", s.label());
        for secret in [AWS, MAVEN, GH] {
            assert!(!out.contains(secret), "{}: {out}", s.label());
        }
    }
}
