//! Records the git commit the extension is built from (`_core.__build_git_commit__`,
//! written into every result folder's `run.json`), with `-dirty` when tracked
//! files differ from it. Outside a git checkout nothing is recorded.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    // Rebuild when HEAD moves (a commit, a checkout) or the index changes (staged edits).
    for path in ["HEAD", "index"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(r) =
        git(&["symbolic-ref", "-q", "HEAD"]).and_then(|r| git(&["rev-parse", "--git-path", &r]))
    {
        println!("cargo:rerun-if-changed={r}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(commit) = git(&["rev-parse", "HEAD"]) {
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        println!(
            "cargo:rustc-env=MANETLAB_BUILD_GIT_COMMIT={commit}{}",
            if dirty { "-dirty" } else { "" }
        );
    }
}
