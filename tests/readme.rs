//! The figures README.md quotes from `explore` and `shrink` are the ones the
//! binary prints: each case runs a command, takes the numbers out of what it
//! prints, and looks for the README's sentence or table row with them. When
//! a change of the engine moves a count, this says which line to update.

use std::process::Command;

/// The numbers in `deadsim ARGS`'s stdout from the first `line` on, to the
/// end of that line, in order (`13,061` and `0.04` each one number, as text).
fn numbers(args: &[&str], line: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_deadsim")).args(args).output().expect("deadsim runs");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let at = stdout
        .lines()
        .find_map(|l| l.find(line).map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("deadsim {}: no line with {line:?} in:\n{stdout}", args.join(" ")));
    let mut nums = Vec::new();
    let mut cur = String::new();
    for c in at.chars().chain([' ']) {
        if c.is_ascii_digit() || (!cur.is_empty() && (c == ',' || c == '.')) {
            cur.push(c);
        } else if !cur.is_empty() {
            nums.push(cur.trim_end_matches([',', '.']).to_string());
            cur.clear();
        }
    }
    nums
}

/// `n` as the README writes it: thousands grouped with commas.
fn group(n: &str) -> String {
    let digits: String = n.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A markdown file of the repository, every run of whitespace one space
/// (a sentence may wrap).
struct Doc {
    path: &'static str,
    text: String,
}

/// The top-level README.
fn readme() -> Doc {
    markdown("README.md")
}

fn markdown(path: &'static str) -> Doc {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    Doc { path, text: text.split_whitespace().collect::<Vec<_>>().join(" ") }
}

fn assert_quoted(doc: &Doc, want: &str) {
    assert!(doc.text.contains(want), "{} does not say (or no longer says) what the binary prints:\n  {want}", doc.path);
}

/// Executions of a proof by `deadsim explore ARGS`.
fn proved(args: &[&str]) -> String {
    let mut all = vec!["explore"];
    all.extend(args);
    group(&numbers(&all, "proved: ")[0])
}

#[test]
fn the_explore_counts_it_quotes_are_printed() {
    let r = readme();
    let no_reduction = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--no-reduction");
        proved(&all)
    };
    let abba = ["abba", "--fixed"];
    assert_quoted(&r, &format!("| `abba --fixed` (3 rounds) | {} | {} |", proved(&abba), no_reduction(&abba)));
    let p2 = ["abba", "--fixed", "--preemptions", "2"];
    assert_quoted(&r, &format!("| `abba --fixed --preemptions 2` | {} | {} |", proved(&p2), no_reduction(&p2)));
    let p100 = ["abba", "--fixed", "--preemptions", "100"];
    assert_quoted(
        &r,
        &format!(
            "| `abba --fixed --preemptions 100` | {} (by the search without a bound) | {} |",
            proved(&p100),
            no_reduction(&p100)
        ),
    );
    assert_quoted(
        &r,
        &format!(
            "| `philosophers --philosophers 4 --ordered --rounds 1` | {} |",
            proved(&["philosophers", "--philosophers", "4", "--ordered", "--rounds", "1"])
        ),
    );
    let minimal = proved(&["flink", "--scenario", "minimal", "--flink-version", "1.13.2"]);
    assert_quoted(&r, &format!("| `flink --scenario minimal --flink-version 1.13.2` | {minimal} |"));
    assert_quoted(&r, &format!("Flink's `minimal` on 1.13.2 {minimal} ("));
    let p4 = ["flink", "--scenario", "minimal", "--flink-version", "1.13.2", "--preemptions", "4"];
    assert_quoted(
        &r,
        &format!(
            "| `flink --scenario minimal --flink-version 1.13.2 --preemptions 4` | {}, 0.00 s (by the search without a bound) | {}, ",
            proved(&p4),
            no_reduction(&p4)
        ),
    );
    // One call of one caller, against each client.
    let one_call = |client: &str| proved(&["ttrpc", "--client", client, "--callers", "1", "--calls", "1"]);
    let (v110, v102, v123) = (one_call("v1.1.0"), one_call("v1.0.2"), one_call("v1.2.3"));
    assert_quoted(&r, &format!("`--client v1.1.0` {v110} ("));
    assert_quoted(&r, &format!("`v1.0.2` {v102} ("));
    assert_quoted(&r, &format!("`v1.2.3` {v123} ("));
    assert_quoted(&r, &format!("(`--client v1.0.2`: {v102} executions; `--client v1.2.3`: {v123})"));
    let ttrpc = ["ttrpc", "--client", "v1.1.0", "--callers", "1", "--calls", "1", "--preemptions", "2"];
    assert_quoted(
        &r,
        &format!("| `ttrpc --client v1.1.0 --callers 1 --calls 1 --preemptions 2` | {}, ", proved(&ttrpc)),
    );
}

/// The cells after the first of the README's table row for `` `cmd` ``.
fn row(cmd: &str) -> Vec<String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let head = format!("| `{cmd}` |");
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("README.md has no table row for `{cmd}`"));
    line[head.len()..].split('|').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect()
}

#[test]
fn the_philosophers_proofs_it_quotes_are_printed() {
    let r = readme();
    let all = numbers(&["explore", "philosophers", "--ordered"], "proved: ");
    let (executions, pruned) = (group(&all[0]), group(&all[1]));
    assert_quoted(&r, &format!("`philosophers --ordered` {executions} ("));
    assert_quoted(&r, &format!("(`philosophers --ordered`: {pruned} of its {executions})"));
    assert_quoted(&r, &format!("(`philosophers --ordered`: {executions} executions for every"));
    for (cmd, plain) in [
        ("philosophers --ordered --preemptions 2", false),
        ("philosophers --ordered --philosophers 4 --preemptions 2", true),
        ("philosophers --ordered --philosophers 4 --preemptions 4", false),
    ] {
        let args: Vec<&str> = cmd.split(' ').collect();
        let cells = row(cmd);
        // "324,382 executions, 1.60 s" or "27,341, 0.11 s": the count, then the rest.
        let starts = |cell: &str, n: &str| cell.strip_prefix(n).is_some_and(|r| r.starts_with([',', ' ']));
        assert!(starts(&cells[0], &proved(&args)), "README row `{cmd}`: {cells:?}");
        if plain {
            let mut args = args.clone();
            args.push("--no-reduction");
            assert!(starts(&cells[1], &proved(&args)), "README row `{cmd}`: {cells:?}");
        }
    }
}

#[test]
fn the_shrink_figures_it_quotes_are_printed() {
    let r = readme();
    // "shrunk from P preemptions and S steps to P' preemption(s) and S' steps (N tries)"
    let shrink = |args: &[&str]| {
        let mut all = vec!["shrink"];
        all.extend(args);
        let n = numbers(&all, "shrunk from");
        assert_eq!(n.len(), 5, "{n:?}");
        n
    };
    let n = shrink(&["philosophers", "--seed", "0"]);
    assert_quoted(
        &r,
        &format!(
            "`deadsim shrink philosophers --seed 0`: from {} preemptions and {} steps to {} preemption and {} steps, proved the fewest ({} tries)",
            n[0], n[1], n[2], n[3], n[4]
        ),
    );
    let n = shrink(&["abba", "--seed", "3"]);
    assert_quoted(
        &r,
        &format!(
            "`deadsim shrink abba --seed 3`: from {} preemptions and {} steps to {} and {}, the smallest AB/BA deadlock ({} tries)",
            n[0], n[1], n[2], n[3], n[4]
        ),
    );
    let (s0, s1) = (shrink(&["ttrpc", "--seed", "0"]), shrink(&["ttrpc", "--seed", "1"]));
    assert_eq!(s1[2], "0", "seed 1 shrinks to no preemption: {s1:?}");
    assert_quoted(
        &r,
        &format!(
            "`deadsim shrink ttrpc --seed 0`: from {} preemptions and {} steps to {} and {} (seed 1: from {} to none, so proved the fewest, in {} tries)",
            s0[0], s0[1], s0[2], s0[3], s1[0], s1[4]
        ),
    );
    let n = shrink(&["ttrpc", "--client", "v1.2.3", "--seed", "7"]);
    assert_quoted(
        &r,
        &format!(
            "`deadsim shrink ttrpc --client v1.2.3 --seed 7`: from {} preemptions and {} steps to {} and {} (",
            n[0], n[1], n[2], n[3]
        ),
    );
    assert_quoted(
        &r,
        &format!(
            "in {} steps with {} preemptions, where seed 7 took {} steps and {} preemptions",
            n[3], n[2], n[1], n[0]
        ),
    );
    let n = shrink(&["ttrpc", "--client", "v1.2.3", "--strategy", "pct", "--seed", "1"]);
    assert_quoted(&r, &format!("shrink reaches the same cycle in {} steps with {} preemptions.", n[3], n[2]));
}

#[test]
fn the_flink_models_readme_quotes_what_is_printed() {
    let r = markdown("sim/src/models/flink/README.md");
    let fixed = proved(&["flink", "--scenario", "minimal", "--flink-version", "1.14.0"]);
    for v in ["1.12.5", "1.13.2", "1.13.3", "1.13.5"] {
        assert_eq!(proved(&["flink", "--scenario", "minimal", "--flink-version", v]), fixed, "{v}");
    }
    assert_quoted(
        &r,
        &format!("| 1.12.5, 1.13.2, 1.13.3, 1.13.5, 1.14.0 | no failure (proved by `explore`: {fixed} executions) |"),
    );
    assert_quoted(&r, &format!("`explore` proves the minimal scenario ({fixed} executions)."));
    let self_assign = proved(&["flink", "--fix", "self-assign", "--scenario", "minimal"]);
    assert_quoted(
        &r,
        &format!("| 1.13.1 `--fix self-assign` | no failure (proved by `explore`: {self_assign} executions) |"),
    );
    assert_quoted(
        &r,
        &format!("`deadsim explore flink --fix self-assign --scenario minimal` proves it ({self_assign} executions)"),
    );
    let seed = numbers(&["hunt", "flink", "--flink-version", "1.13.1", "--scenario", "minimal"], "deadlock at seed");
    let steps = numbers(&["hunt", "flink", "--flink-version", "1.13.1", "--scenario", "minimal"], "Found a deadlock");
    assert_quoted(&r, &format!("| 1.13.0, 1.13.1 | deadlock, lowest seed {}, {} steps |", seed[0], steps[0]));
}

#[test]
fn the_ttrpc_models_readme_has_the_matrix_hunt_prints() {
    let r = markdown("sim/src/models/ttrpc/README.md");
    let out = Command::new(env!("CARGO_BIN_EXE_deadsim"))
        .args(["hunt", "ttrpc", "--matrix", "--jobs", "2"])
        .output()
        .expect("deadsim runs");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("seeds 0..=9999"), "the README's matrix is of seeds 0..10000: {stdout}");
    // "v1.0.2    DEADLOCK @0    no-deadlock ..." as the README's "| v1.0.2 | DEADLOCK @0 | no-deadlock | ... |".
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with('v')).collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    for row in rows {
        let (server, cells) = row.split_once(' ').unwrap();
        let cells: Vec<String> = cells
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(cells.len(), 4, "{row}");
        assert_quoted(&r, &format!("| {server} | {} |", cells.join(" | ")));
    }
}

/// The fenced block that follows the first line of `path` containing
/// `after`, as its lines.
fn block_after(path: &str, after: &str) -> Vec<String> {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut lines = text.lines().skip_while(|l| !l.contains(after));
    assert!(lines.next().is_some(), "{path}: no line with {after:?}");
    let mut lines = lines.skip_while(|l| !l.starts_with("```"));
    lines.next().unwrap_or_else(|| panic!("{path}: no block after {after:?}"));
    lines.take_while(|l| !l.starts_with("```")).map(str::to_string).collect()
}

/// The block of `path` after `after` is what `deadsim ARGS` prints: each run
/// of lines between the block's `...` lines (the parts left out) is in
/// stdout, in the block's order. Whitespace is compared as one space, so a
/// long line the document wraps still matches.
fn assert_prints(path: &str, after: &str, args: &[&str]) {
    let block = block_after(path, after);
    let out = Command::new(env!("CARGO_BIN_EXE_deadsim")).args(args).output().expect("deadsim runs");
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let stdout = norm(&String::from_utf8(out.stdout).unwrap());
    let mut at = 0;
    for part in block.split(|l| l.trim_start().starts_with("...")) {
        let part = norm(&part.join("\n"));
        if part.is_empty() {
            continue;
        }
        match stdout[at..].find(&part) {
            Some(i) => at += i + part.len(),
            None => panic!(
                "{path}: the block after {after:?} does not show what `deadsim {}` prints (in order):\n  {part}",
                args.join(" ")
            ),
        }
    }
}

#[test]
fn the_reports_the_readmes_quote_are_printed() {
    assert_prints(
        "README.md",
        "A deadlock report, then the lock-order findings of the run",
        &["run", "abba", "--seed", "0"],
    );
    assert_prints(
        "README.md",
        "reports, before an INFO note on the nesting of two `bufferQueue` monitors",
        &["hunt", "flink", "--seeds", "0..2000"],
    );
    assert_prints(
        "sim/src/models/flink/README.md",
        "original report, frame for frame",
        &["hunt", "flink", "--flink-version", "1.13.1", "--scenario", "minimal", "--seeds", "0..1000"],
    );
    assert_prints(
        "sim/src/models/flink/README.md",
        "fails:",
        &["run", "flink", "--flink-version", "1.13.1", "--fix", "self-assign-clear", "--seed", "7"],
    );
    assert_prints(
        "sim/src/models/ttrpc/README.md",
        "behind the cycle):",
        &["replay", "ttrpc", "--server", "v1.0.2", "--client", "v1.2.3", "--seed", "7"],
    );
}
