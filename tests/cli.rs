//! The `deadsim` binary as a user runs it: exit codes, JSON, errors, files.

use std::process::Command;

use serde_json::json;

fn deadsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_deadsim")).args(args).output().expect("deadsim runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json(args: &[&str]) -> (i32, serde_json::Value) {
    let (code, out, err) = deadsim(args);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {out} {err}"));
    (code, v)
}

/// The committed abba trace, which tests edit a copy of.
const ABBA_TRACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/traces/abba-deadlock.json");

/// [`ABBA_TRACE`] as JSON, to edit.
fn abba_trace_json() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(ABBA_TRACE).unwrap()).unwrap()
}

/// A scratch directory of this test process, made empty, and removed with
/// what is in it when the test ends (passing or not).
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("deadsim-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn run_json_names_the_cycle_and_exits_1_on_a_deadlock() {
    let (code, v) = json(&["run", "abba", "--seed", "0", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["verdict"], "deadlock");
    assert_eq!(v["seed"], 0);
    assert_eq!(v["schedules"], 1);
    assert_eq!(
        v["cycle"],
        serde_json::json!([
            {"task": "T1", "id": 1, "op": "lock", "waits_for": "B", "at": "abba::worker (sim/src/models/abba.rs:28)",
             "stack": ["abba::worker (sim/src/models/abba.rs:28)"],
             "holds": [{"resource": "A", "kind": "mutex", "mode": "", "at": "abba::worker (sim/src/models/abba.rs:27)", "frame": 0}]},
            {"task": "T2", "id": 2, "op": "lock", "waits_for": "A", "at": "abba::worker (sim/src/models/abba.rs:28)",
             "stack": ["abba::worker (sim/src/models/abba.rs:28)"],
             "holds": [{"resource": "B", "kind": "mutex", "mode": "", "at": "abba::worker (sim/src/models/abba.rs:27)", "frame": 0}]}
        ])
    );
    let (code, v) = json(&["run", "abba", "--fixed", "--seed", "5", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["verdict"], "no-deadlock");
    assert_eq!(v["seed"], 5, "run names the seed it ran, failing or not");
    assert_eq!(v["cycle"], serde_json::json!([]));
}

#[test]
fn hunt_reports_the_same_lowest_failing_seed_for_any_job_count() {
    let mut seeds = Vec::new();
    for jobs in ["1", "2", "4"] {
        let (code, v) =
            json(&["hunt", "philosophers", "--philosophers", "3", "--seeds", "0..500", "--jobs", jobs, "--json"]);
        assert_eq!(code, 1);
        assert_eq!(v["verdict"], "deadlock");
        seeds.push((v["seed"].clone(), v["schedules"].clone()));
    }
    assert!(seeds.windows(2).all(|w| w[0] == w[1]), "{seeds:?}");
    // And it is the lowest: every seed below it, run here one by one, completes.
    let params = [("philosophers".to_string(), "3".to_string())];
    let m = sim::models::find("philosophers").unwrap().configure(&params).unwrap();
    let lowest = (0..500).find(|&s| m.run(s, false).outcome.is_failure()).unwrap();
    assert_eq!(seeds[0], (json!(lowest), json!(lowest + 1)), "{seeds:?}");
    let (code, v) = json(&["hunt", "abba", "--fixed", "--seeds", "0..=999", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["schedules"], 1000);
}

#[test]
fn hunt_lock_order_findings_do_not_depend_on_the_job_count() {
    // Many seeds show the same lock-order facts with other tasks and sites;
    // the findings must name those of the lowest seed, as one job does.
    let model = ["hunt", "ttrpc", "--server", "v1.2.3", "--client", "v1.2.3", "--unregistered-fraction", "0.5"];
    for extra in [&["--seeds", "0..1500", "--keep-going"][..], &["--seeds", "0..1500"][..]] {
        let mut seen = Vec::new();
        for jobs in ["1", "2", "4"] {
            let args: Vec<&str> = model.iter().chain(extra).chain(&["--jobs", jobs, "--json"]).copied().collect();
            let (code, v) = json(&args);
            assert_eq!(code, 1);
            assert!(!v["warnings"].as_array().unwrap().is_empty());
            seen.push(v["warnings"].clone());
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{extra:?}: {seen:#?}");
    }
}

#[test]
fn hunt_without_a_model_prints_the_verdict_table() {
    let (code, out, _) = deadsim(&["hunt", "--seeds", "0..2000"]);
    assert_eq!(code, 1, "deadlocks were found");
    let row = |model: &str, variant: &str| {
        out.lines()
            .find(|l| l.split_whitespace().take(2).collect::<Vec<_>>() == [model, variant])
            .unwrap_or_else(|| panic!("no row {model} {variant} in\n{out}"))
            .to_string()
    };
    assert!(row("abba", "(default)").contains("deadlock"));
    assert!(row("abba", "--fixed").contains("no-deadlock"));
    assert!(row("philosophers", "--ordered").contains("no-deadlock"));
    assert!(out.lines().filter(|l| l.contains(" yes ")).count() >= 4, "every variant as expected:\n{out}");
    // Past seed 2948, where flink's pipeline first deadlocks, every variant has its expected verdict.
    let (code, v) = json(&["hunt", "--seeds", "0..3000", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["all_expected"], json!(true), "{v}");
    assert_eq!(v["variants"].as_array().map(Vec::len), Some(16), "{v}");
    // Each failing row's replay command reproduces its cycle; a passing row has none.
    for row in v["variants"].as_array().unwrap() {
        if row["seed"].is_null() {
            assert_eq!((&row["schedule"], &row["replay"]), (&json!(null), &json!(null)), "{row}");
            continue;
        }
        let replay = row["replay"].as_str().unwrap();
        assert!(replay.ends_with(&format!("--schedule {}", row["schedule"].as_str().unwrap())), "{row}");
        let mut args: Vec<&str> = replay.split_whitespace().skip(1).collect();
        args.push("--json");
        let (code, again) = json(&args);
        assert_eq!((code, &again["cycle"]), (1, &row["cycle"]), "{row}");
    }
    // The report lists the exact replay command of each failure, by seed.
    assert!(out.contains("Replay each failure:\n  deadsim replay abba --seed 0\n"), "{out}");
    // --check-expected: the exit code says whether every row has its
    // expected verdict. Below seed 2948 flink's pipeline has not deadlocked.
    let (code, out, err) = deadsim(&["hunt", "--seeds", "0..2000", "--check-expected"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains(
            "\n--check-expected: 1 of the 16 rows differs from the expected verdict: flink --flink-version 1.13.1 \
             --scenario pipeline: no-deadlock (expected deadlock).\n"
        ),
        "{out}"
    );
    let (code, out, err) = deadsim(&["hunt", "--seeds", "0..3000", "--check-expected"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\n--check-expected: every one of the 16 rows has its expected verdict.\n"), "{out}");
    let (code, v) = json(&["hunt", "--seeds", "0..3000", "--check-expected", "--json"]);
    assert_eq!((code, &v["all_expected"]), (0, &json!(true)), "{v}");
    for (args, says) in [
        (&["hunt", "abba", "--check-expected"][..], "--check-expected checks a table's rows"),
        (&["hunt", "ttrpc", "--matrix", "--callers", "2", "--check-expected"], "leave out --callers"),
    ] {
        let (code, _, err) = deadsim(args);
        assert_eq!((code, err.lines().count()), (2, 1), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn traces_are_identical_across_processes() {
    let dir = Scratch::new("cli");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    for p in [&a, &b] {
        let (code, _, _) = deadsim(&["run", "philosophers", "--seed", "3", "--trace", p.to_str().unwrap()]);
        assert_eq!(code, 1, "philosophers seed 3 deadlocks");
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // replay runs the same seed, prints its events, and writes the same trace.
    let c = dir.join("c.json");
    let (code, out, _) = deadsim(&["replay", "philosophers", "--seed", "3", "--trace", c.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("step "), "replay prints the events");
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
}

#[test]
fn every_command_answers_version() {
    let want = format!(" {}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["--version"][..], &["render", "--version"], &["hunt", "-V"]] {
        let (code, out, err) = deadsim(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(out, format!("deadsim{want}"), "{args:?}");
    }
    // The help of `help` is the top level's, which says what `help` does;
    // `help COMMAND --help` is COMMAND's; `help -V` the version.
    for flag in ["--help", "-h"] {
        let (code, out, err) = deadsim(&["help", flag]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("Exit codes:") && out.contains("\n  help "), "{out}");
        let (code, out, err) = deadsim(&["help", "run", flag]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("Usage: deadsim run [OPTIONS] <MODEL>"), "{out}");
    }
    for args in [&["help", "-V"][..], &["help", "run", "--version"]] {
        let (code, out, err) = deadsim(args);
        assert_eq!((code, out), (0, format!("deadsim{want}")), "{args:?}: {err}");
    }
    let (code, _, err) = deadsim(&["help", "nope", "--help"]);
    assert_eq!(code, 2, "{err}");
}

/// An argument that is not UTF-8 is bad usage, whichever it is.
#[cfg(unix)]
#[test]
fn arguments_that_are_not_utf8_are_bad_usage() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"\xff");
    let os = std::ffi::OsStr::new;
    let flag_eq = std::ffi::OsStr::from_bytes(b"--client=\xff");
    for (args, names) in [
        (vec![bad], "unrecognized subcommand"),
        (vec![os("run"), bad], "argument `\u{fffd}`: not UTF-8"),
        (vec![os("explore"), bad], "argument `\u{fffd}`: not UTF-8"),
        // A flag's value: the flag named.
        (vec![os("run"), os("abba"), os("--seed"), bad], "--seed \u{fffd}: not UTF-8"),
        (vec![os("run"), os("ttrpc"), flag_eq], "--client \u{fffd}: not UTF-8"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_deadsim")).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("deadsim: error: ") && err.lines().count() == 1, "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
}

#[test]
fn bad_usage_exits_2_with_one_line_naming_the_problem() {
    for (args, needle) in [
        (vec!["run", "nope"], "unknown model `nope`"),
        (vec!["run", "philosophers", "--philosophers", "0"], "--philosophers: 0 is out of range"),
        (vec!["run", "philosophers", "--philosophers", "-3"], "--philosophers: `-3` is not a whole number"),
        (vec!["run", "abba", "--ordered"], "--ordered does not apply to model abba"),
        (vec!["hunt", "abba", "--seeds", "9..2"], "--seeds `9..2` is empty"),
        (vec!["hunt", "abba", "--seeds", "x"], "--seeds `x`"),
        (vec!["hunt", "abba", "--jobs", "0"], "--jobs 0: expected 1 to 1024 worker threads"),
        (vec!["explore", "abba", "--seed", "3"], "explore takes no seed: it runs every schedule"),
        (vec!["hunt", "abba", "--jobs", "100000"], "--jobs 100000: expected 1 to 1024 worker threads"),
        (vec!["hunt", "abba", "--seeds", "10..3"], "--seeds `10..3` is empty: 3 is below 10"),
        (vec!["hunt", "abba", "--seeds", "0..3", "--shard", "4/5"], "too few for 5 shards; split them at most 3 ways"),
        (vec!["hunt", "abba", "--seeds", "0..3", "--shard", "1/5"], "too few for 5 shards; split them at most 3 ways"),
        (vec!["hunt", "--fixed"], "model parameters need a model"),
        (vec!["run", "abba", "--seed", "-1"], "'-1' for '--seed <SEED>': not a seed (a whole number from 0 to"),
        (vec!["replay", "abba", "--seed", "x"], "'x' for '--seed <SEED>': not a seed (a whole number from 0 to"),
        (vec!["frobnicate"], "frobnicate"),
        (vec!["run", "abba", "--max-steps", "0"], "--max-steps must be at least 1"),
        (vec!["hunt", "abba", "--time-budget", "1e20"], "--time-budget `1e20`: too large"),
        (
            vec!["hunt", "abba", "--time-budget", "1e-19"],
            "--time-budget `1e-19`: expected a time above 0 (at least 1 ns)",
        ),
        (vec!["hunt", "--time-budget", "1"], "--time-budget needs a model"),
        (vec!["hunt", "--shard", "0/2", "--keep-going"], "--keep-going and --shard need a model"),
        (vec!["hunt", "abba", "--trace", "-"], "--trace -: give a file name"),
        (vec!["run"], "not provided: <MODEL>"),
        (
            vec!["run", "abba", "--trace", ".json"],
            "--trace .json: a name that is only an extension; put a name before it (run.json)",
        ),
        (vec!["export", "t.json", "--perfetto", "./.JSON"], "--perfetto ./.JSON: a name that is only an extension"),
        (vec!["render", "-"], "-: a trace is read from a file, not from stdin"),
        (vec!["export", "-", "--perfetto", "p.json"], "-: a trace is read from a file, not from stdin"),
        (
            vec!["export", "t.json", "--perfetto", "p.PNG"],
            "--perfetto p.PNG: .png is a chart's name, and this output is JSON (name it .json; deadsim render draws charts)",
        ),
        (vec!["run", "abba", "--trace", "fig.svg"], "--trace fig.svg: .svg is a chart's name, and this output is JSON"),
        (vec!["run", "abba", "--trace", ".png"], "--trace .png: .png is a chart's name, and this output is JSON"),
        (vec!["hunt", "abba", "--trace", "/tmp/x.png/"], "--trace /tmp/x.png/: the folder /tmp/x.png/ does not exist"),
        (vec!["hunt", "abba", "--strategy", "bogus", "--preemptions", "1"], "--strategy `bogus` is not a strategy"),
        // clap's errors point at the help of the command given.
        (vec!["render", "t.json", "--bogus"], "unexpected argument '--bogus' found (see deadsim render --help)"),
        (vec!["--bogus"], "unexpected argument '--bogus' found (see deadsim --help)"),
        (vec![], "no command given: one of models, run, hunt, replay, explore, shrink, render, export, merge, bench"),
        (vec!["render", "t.json", "-o", "e.jpg"], "-o e.jpg: .jpg is not a chart format"),
        (vec!["render", "t.json", "-o", ".jpg"], "-o .jpg: a name that is only an extension; put a name before it"),
        (vec!["render", "t.json", "-o", "./.png", "--chart", "all"], "-o ./.png: a name that is only an extension"),
        (vec!["run", "abba", "--render", ".svg"], "--render .svg: a name that is only an extension"),
        (
            vec!["run", "abba", "--render", "fig.JPG"],
            "--render fig.JPG: .jpg is not a chart format (deadsim draws .png",
        ),
        (vec!["run", "abba", "--render", "run.json"], "--render run.json: .json names a trace, but the charts are"),
        (vec!["render", "t.json", "-o", "fig.json", "--chart", "all"], "-o fig.json: .json names a trace"),
        (vec!["run", "abba", "--render", "/dev/null"], "--render /dev/null: not a folder or a plain file"),
        (vec!["run", "abba", "--render", "/dev/stdout"], "--render /dev/stdout: not a folder or a plain file"),
        (
            vec!["replay", "abba", "--schedule", "ds1:abba:a5167e82:1x10.2x2.1.1"],
            "2 of the schedule's 14 choices unused",
        ),
        (
            vec!["replay", "abba", "--schedule", "ds1:abba:a5167e82:1x10.2x2", "--strategy", "pct"],
            "--strategy goes with --seed",
        ),
        (
            vec!["hunt", "abba", "--strategy", "dfs", "--keep-going", "--preemptions", "1"],
            "--keep-going goes without --preemptions",
        ),
        (vec!["explore", "abba", "--strategy", "pct"], "explore takes no --strategy: it is the exhaustive one"),
        (vec!["hunt", "abba", "--strategy", "dfs", "--matrix"], "--matrix does not apply to --strategy dfs"),
        (vec!["hunt", "abba", "--strategy", "dfs", "--seeds", "0..5"], "--seeds does not apply to --strategy dfs"),
        (vec!["hunt", "abba", "--strategy", "dfs", "--jobs", "2"], "--jobs does not apply to --strategy dfs"),
        (
            vec!["hunt", "abba", "--preemptions", "2"],
            "--preemptions applies to --strategy dfs only (the exhaustive search, as deadsim explore); --strategy random runs seeds",
        ),
        (vec!["hunt", "abba", "--strategy", "pct", "--no-reduction"], "--no-reduction applies to --strategy dfs only"),
        (vec!["hunt", "abba", "--max-executions", "9"], "--max-executions applies to --strategy dfs only"),
        (vec!["hunt", "abba", "--require-complete"], "--require-complete applies to --strategy dfs only"),
        (vec!["hunt", "abba", "--strategy", "dfs", "--max-executions", "0"], "--max-executions must be at least 1"),
        (vec!["hunt", "--check-determinism"], "--check-determinism needs one model"),
        (
            vec!["hunt", "ttrpc", "--matrix", "--check-determinism"],
            "--matrix goes without --check-determinism: hunt one cell",
        ),
        (vec!["hunt", "ttrpc", "--matrix", "--keep-going"], "--matrix goes without --keep-going: hunt one cell"),
        (vec!["hunt", "abba", "--jobs", "-1"], "'--jobs <N>': expected 1 to 1024 worker threads"),
        (vec!["hunt", "abba", "--max-steps", "x"], "'--max-steps <N>': not a whole number from 1 to 18446744073709551615"),
        (vec!["explore", "abba", "--preemptions", "4294967296"], "'--preemptions <K>': not a whole number from 0 to 4294967295"),
        (vec!["explore", "abba", "--preemptions", "-1"], "'--preemptions <K>': not a whole number from 0 to 4294967295"),
        (vec!["shrink", "abba", "--seed", "0", "--max-tries", "1e3"], "'--max-tries <N>': not a whole number"),
        (vec!["hunt", "abba", "--trace", "/tmp/"], "--trace /tmp/: a folder"),
        (vec!["hunt", "abba", "--time-budget", "1e300"], "--time-budget `1e300`: too large"),
        (vec!["models", "nope"], "unknown model `nope`"),
        (vec!["export", "t.json"], "--perfetto <FILE>"),
        (vec!["export", "/nonexistent-dir/t.json", "--perfetto", "p.json"], "/nonexistent-dir/t.json: cannot read"),
    ] {
        let (code, _, err) = deadsim(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let (code, _, err) = deadsim(&["run", "abba", "--trace", "/nonexistent-dir/x.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("--trace /nonexistent-dir/x.json: the folder /nonexistent-dir does not exist"), "{err}");
    // Errors are one line: no clap usage block, no backtrace.
    let (code, _, err) = deadsim(&["run", "abba", "--bogus"]);
    assert_eq!(code, 2);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn explore_proves_or_finds_and_schedules_replay() {
    let (code, out, _) = deadsim(&["explore", "abba", "--fixed"]);
    assert_eq!(code, 0);
    assert!(out.contains("proved: 35 executions, every schedule completes without deadlock"), "{out}");
    // Within a bound: the reduction by default, plain DFS on request, each
    // saying how the search ended. A bound no schedule reaches is settled by
    // the search without a bound, taking turns with the passes (they alone
    // took 410 executions, every interleaving is 160).
    let (code, out, _) = deadsim(&["explore", "abba", "--fixed", "--preemptions", "100"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("proved: 105 executions, every schedule completes")
            && out.contains("(partial-order reduction: the passes had raised the bound from 0 to 3 when the search without a bound beside them covered every schedule, in 35 of the 105, 0 of them pruned as redundant)"),
        "{out}"
    );
    // Covered while the passes were still at 0: no bound was raised.
    let (code, out, _) =
        deadsim(&["explore", "ttrpc", "--client", "v1.1.0", "--callers", "1", "--calls", "1", "--preemptions", "2"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("(partial-order reduction: the passes were still within 0 when the search without a bound beside them covered every schedule, in 5994 of the 17982"),
        "{out}"
    );
    let (code, out, _) = deadsim(&["explore", "abba", "--fixed", "--preemptions", "100", "--no-reduction"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("proved: 160 executions, every schedule within 100 preemptions completes")
            && out.contains("(plain DFS, the bound raised from 0; no schedule has more than 6 preemptions)"),
        "{out}"
    );
    // Flink's pipeline has a Netty thread that sleeps: no reduction, and the report says why.
    let (code, out, _) = deadsim(&["explore", "flink", "--scenario", "pipeline", "--max-executions", "5"]);
    assert_eq!(code, 0);
    assert!(out.contains("no failure in 5 executions, but the budget (--max-executions 5) ran out before every schedule was covered; the model uses virtual time, which every step moves, so the search ran without reduction, and without a bound it varies the last steps first: --preemptions 2 tries every schedule with few preemptions first\n"), "{out}");
    // Within a bound, the hint is not given.
    let (_, out, _) =
        deadsim(&["explore", "flink", "--scenario", "pipeline", "--max-executions", "5", "--preemptions", "1"]);
    assert!(out.contains("so the search ran without reduction\n"), "{out}");
    let (code, v) = json(&["explore", "flink", "--scenario", "pipeline", "--max-executions", "5", "--json"]);
    assert_eq!((code, &v["reduction"], &v["timed"]), (0, &json!(false), &json!(true)));
    let (code, v) = json(&["explore", "abba", "--json"]);
    assert_eq!(code, 1);
    assert_eq!((&v["verdict"], &v["reduction"], &v["timed"]), (&json!("deadlock"), &json!(true), &json!(false)));
    let schedule = v["schedule"].as_str().unwrap().to_string();
    let (code, out, _) = deadsim(&["replay", "abba", "--schedule", &schedule]);
    assert_eq!(code, 1);
    assert!(out.contains("Found a deadlock"), "{out}");
    for (args, needle) in [
        (vec!["replay", "philosophers", "--schedule", schedule.as_str()], "recorded on model abba, not philosophers"),
        (vec!["replay", "abba", "--rounds", "2", "--schedule", schedule.as_str()], "recorded with other parameters"),
        // A schedule for other parameters names those within two changes that give its fingerprint.
        (vec!["replay", "abba", "--fixed", "--schedule", schedule.as_str()], "(`abba` gives its fingerprint)"),
        (vec!["replay", "abba", "--rounds", "7", "--schedule", schedule.as_str()], "(`abba` gives its fingerprint)"),
        // Flink's minimal scenario refuses the pipeline's flags even at their defaults.
        (
            vec!["replay", "flink", "--schedule", "ds1:flink:2e266767:0.2x2.1.2.1.2.1x3.2.1"],
            "(`flink --scenario minimal` gives its fingerprint)",
        ),
        // Parameters are matched with their specs by name, not by place.
        (
            vec!["replay", "flink", "--scenario", "minimal", "--schedule", "ds1:flink:e2217295:0"],
            "(`flink --scenario minimal --exclusive 1` gives its fingerprint)",
        ),
        // A number given off its default, where the schedule was recorded with the default.
        (
            vec!["replay", "ttrpc", "--unregistered-fraction", "0.5", "--schedule", "ds1:ttrpc:07cb6a48:0"],
            "(`ttrpc` gives its fingerprint)",
        ),
        (
            vec!["replay", "ttrpc", "--request-bytes", "5000", "--schedule", "ds1:ttrpc:07cb6a48:0"],
            "(`ttrpc` gives its fingerprint)",
        ),
        (vec!["replay", "abba", "--schedule", "ds1:abba:zz:1"], "fingerprint `zz` is not 8 hex digits"),
        (vec!["replay", "abba"], "give --seed N or --schedule STRING"),
        (vec!["hunt", "abba", "--strategy", "pct:99"], "the PCT depth is a whole number from 1 to 10"),
        (vec!["hunt", "abba", "--shard", "2/2"], "--shard `2/2`"),
        (
            vec!["hunt", "abba", "--time-budget", "-1"],
            "--time-budget `-1`: expected a time above 0, in seconds or with a unit (90, 1.5s, 500ms, 10m, 2h)",
        ),
        (
            vec!["hunt", "abba", "--time-budget", "nan"],
            "--time-budget `nan`: expected a time above 0, in seconds or with a unit (90, 1.5s, 500ms, 10m, 2h)",
        ),
        (vec!["explore", "abba", "--time-budget", "1e400"], "--time-budget `1e400`: too large"),
        (vec!["hunt", "abba", "--time-budget", "1 h"], "--time-budget `1 h`: expected a time above 0, in seconds or"),
        (vec!["hunt", "abba", "--time-budget", "ms"], "--time-budget `ms`: expected a time above 0, in seconds or"),
        (vec!["hunt", "abba", "--time-budget", "5d"], "--time-budget `5d`: expected a time above 0, in seconds or"),
        (vec!["hunt", "abba", "--time-budget", "1e400h"], "--time-budget `1e400h`: too large"),
        (vec!["hunt", "abba", "--shard", "-1/2"], "--shard `-1/2`: expected I/N"),
        (vec!["hunt", "abba", "--seed", "3"], "a similar argument exists: '--seeds'"),
        // Refused before it is laid out: more choices than the step limit reads.
        (
            vec!["replay", "abba", "--schedule", "ds1:abba:a5167e82:1x10000000.1x10000000"],
            "--schedule: 20000000 choices, more than the 16000000 this replay reads (16 a step of --max-steps 1000000;",
        ),
        (
            vec!["explore", "philosophers", "--keep-going", "--preemptions", "2"],
            "--keep-going goes without --preemptions",
        ),
    ] {
        let (code, _, err) = deadsim(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn require_complete_fails_an_exploration_cut_short() {
    // Cut short without a failure: 0, unless the proof is required.
    let short = ["explore", "abba", "--fixed", "--max-executions", "5"];
    let (code, out, _) = deadsim(&short);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("--require-complete"), "{out}");
    let (code, out, err) = deadsim(&[&short[..], &["--require-complete"]].concat());
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("no failure in 5 executions, but the budget (--max-executions 5) ran out before every schedule")
            && out.ends_with("\n--require-complete: no proof, as not every schedule was covered (exit 1)\n"),
        "{out}"
    );
    let (code, v) = json(&[&short[..], &["--require-complete", "--json"]].concat());
    assert_eq!(
        (code, &v["complete"], &v["require_complete"], &v["verdict"]),
        (1, &json!(false), &json!(true), &json!("no-deadlock"))
    );
    // The same through hunt's dfs, and within a bound.
    let (code, _, _) =
        deadsim(&["hunt", "abba", "--fixed", "--strategy", "dfs", "--max-executions", "5", "--require-complete"]);
    assert_eq!(code, 1);
    let within = ["explore", "abba", "--fixed", "--preemptions", "1", "--max-executions", "3", "--require-complete"];
    let (code, out, _) = deadsim(&within);
    assert_eq!(code, 1);
    assert!(
        out.contains("--require-complete: no proof, as not every schedule within 1 preemption was covered"),
        "{out}"
    );
    // A model with virtual time, whose first execution ends the reduced search: within the budget.
    let timed = ["explore", "flink", "--flink-version", "1.13.2", "--max-executions", "1", "--require-complete"];
    let (code, v) = json(&[&timed[..], &["--json"]].concat());
    assert_eq!(
        (code, &v["executions"], &v["timed"], &v["stopped"]),
        (1, &json!(1), &json!(true), &json!("max-executions"))
    );
    // A proof passes; a failure is 1 as always.
    for (args, want) in [
        (vec!["explore", "abba", "--fixed", "--require-complete"], 0),
        (vec!["explore", "abba", "--fixed", "--preemptions", "1", "--require-complete"], 0),
        (vec!["hunt", "abba", "--fixed", "--strategy", "dfs", "--require-complete"], 0),
        (vec!["explore", "abba", "--require-complete"], 1),
    ] {
        let (code, out, err) = deadsim(&args);
        assert_eq!(code, want, "{args:?}: {out}{err}");
        assert!(!out.contains("--require-complete:"), "{args:?}: {out}");
    }
}

#[test]
fn explore_keep_going_lists_every_distinct_failure_with_a_replay() {
    // Three philosophers: one cycle (whichever philosopher starts it), found
    // over every schedule; its replay reproduces it.
    let args = ["explore", "philosophers", "--philosophers", "3", "--keep-going"];
    let (code, out, err) = deadsim(&args);
    assert_eq!(code, 1, "{err}");
    let sig = "deadlock: philosopher-* lock fork0 -> philosopher-* lock fork1 -> philosopher-* lock fork2";
    assert!(out.contains("1 distinct failure found by exhaustive search in "), "{out}");
    assert!(out.contains("(partial-order reduction), every schedule covered:\n"), "{out}");
    assert!(out.contains(&format!("\n  {sig}\n    replay: deadsim replay philosophers --philosophers 3 --schedule ")));
    let (code, v) = json(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 1);
    assert_eq!((&v["keep_going"], &v["complete"], &v["stopped"]), (&json!(true), &json!(true), &json!(null)), "{v}");
    let distinct = v["distinct"].as_array().unwrap();
    assert_eq!(distinct.len(), 1, "{v}");
    assert_eq!((&distinct[0]["signature"], &distinct[0]["verdict"]), (&json!(sig), &json!("deadlock")));
    let mut replay: Vec<&str> = distinct[0]["replay"].as_str().unwrap().split_whitespace().skip(1).collect();
    replay.push("--json");
    let (code, again) = json(&replay);
    assert_eq!((code, &again["cycle"]), (1, &v["cycle"]), "{again}");
    // Cut short, it says so and claims no completeness.
    let (code, v) = json(&[&args[..], &["--json", "--max-executions", "5"]].concat());
    assert!(code <= 1);
    assert_eq!((&v["complete"], &v["stopped"]), (&json!(false), &json!("max-executions")), "{v}");
    // hunt --strategy dfs takes it as explore does.
    let (code, h) =
        json(&["hunt", "philosophers", "--philosophers", "3", "--strategy", "dfs", "--keep-going", "--json"]);
    assert_eq!(
        (code, &h["distinct"][0]["signature"], h["distinct"].as_array().map(Vec::len)),
        (1, &json!(sig), Some(1))
    );
    // A model that moves the clock is explored without reduction; cut
    // short, the hint of a bound is not given to a search that takes none.
    let (code, f) = json(&["explore", "flink", "--keep-going", "--max-executions", "20", "--json"]);
    assert!(code <= 1, "{f}");
    assert!(!f["message"].as_str().unwrap().contains("--preemptions"), "{f}");
    // The fix: the proof, as without --keep-going, and an empty list.
    let (code, v) = json(&["explore", "philosophers", "--philosophers", "3", "--ordered", "--keep-going", "--json"]);
    assert_eq!(code, 0);
    assert_eq!((&v["complete"], &v["distinct"]), (&json!(true), &json!([])), "{v}");
}

#[test]
fn shards_merge_into_the_unsharded_result() {
    let dir = Scratch::new("shards");
    let (_, whole) = json(&["hunt", "flink", "--seeds", "0..6000", "--json"]);
    let mut files = Vec::new();
    for i in 0..3 {
        let (_, out, _) = deadsim(&["hunt", "flink", "--seeds", "0..6000", "--shard", &format!("{i}/3"), "--json"]);
        let f = dir.join(format!("{i}.json"));
        std::fs::write(&f, out).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    // A shard's text names the shard and the whole range.
    let (_, out, _) = deadsim(&["hunt", "abba", "--fixed", "--seeds", "0..100", "--shard", "1/3"]);
    assert!(out.starts_with("abba --fixed: no failure in 33 schedules (seeds 33..=65, shard 1/3 of 0..=99,"), "{out}");
    // With every seed run, how rare a failure could still be: 0 of 100, Wilson's upper end.
    let (_, out, _) = deadsim(&["hunt", "abba", "--fixed", "--seeds", "0..100"]);
    assert!(out.starts_with("abba --fixed: no failure in 100 schedules (seeds 0..=99, strategy random; failing share 0%, 95% Wilson CI 0%..3.699%)"), "{out}");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(|s| s.as_str()));
    let (code, merged) = json(&args);
    assert_eq!(code, if whole["seed"].is_null() { 0 } else { 1 });
    for key in ["verdict", "seed", "schedules", "cycle"] {
        assert_eq!(merged[key], whole[key], "{key}");
    }
    // The same lock-order findings, report for report: the shards carry their
    // facts with their seeds, and the merge keeps those a whole hunt keeps
    // (none past its lowest failing seed, each fact from its lowest seed).
    assert!(!whole["warnings"].as_array().unwrap().is_empty());
    assert_eq!(merged["warnings"], whole["warnings"]);
    // So do --keep-going shards, whose runs show one fact with many tasks.
    let ttrpc = ["hunt", "ttrpc", "--client", "v1.2.3", "--keep-going", "--seeds", "0..1000", "--json"];
    let (_, whole) = json(&ttrpc);
    let mut args = vec!["merge".to_string()];
    for i in 0..4 {
        let shard = format!("{i}/4");
        let (_, out, _) = deadsim(&[&ttrpc[..], &["--shard", &shard]].concat());
        let f = dir.join(format!("kg{i}.json"));
        std::fs::write(&f, out).unwrap();
        args.push(f.to_str().unwrap().to_string());
    }
    let (_, kept) = json(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!((&kept["warnings"], &kept["failures"]), (&whole["warnings"], &whole["failures"]));
    // Parameters are compared by value: a shard that writes a number as
    // "02" is the shard of the same hunt, and the merge gives the model's form.
    let mut padded: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
    let (key, value) = padded["params"].as_object().unwrap().iter().find(|(_, x)| x == &&json!(2)).unwrap();
    let key = key.clone();
    assert_eq!(value, &merged["params"][&key]);
    padded["params"][&key] = json!("02");
    let f = dir.join("padded.json");
    std::fs::write(&f, padded.to_string()).unwrap();
    let (code_again, again) = json(&["merge", &files[0], f.to_str().unwrap(), &files[2]]);
    assert_eq!((code_again, again), (code, merged));
    // A shard given twice, a missing one, a shard of a hunt with another step
    // limit or of a --keep-going hunt: refused, naming it.
    let (code, _, err) = deadsim(&["merge", &files[0], &files[0], &files[1]]);
    assert_eq!(code, 2);
    assert!(err.contains("is given twice"), "{err}");
    let (code, out, err) = deadsim(&["merge", &files[0], &files[2]]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("shard(s) 1/3 missing"), "{err}");
    // A list of shards pasted into one file: not a shard.
    let listed = dir.join("listed.json");
    std::fs::write(&listed, format!("[{}]", std::fs::read_to_string(&files[1]).unwrap())).unwrap();
    let (code, _, err) = deadsim(&["merge", &files[0], listed.to_str().unwrap(), &files[2]]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("listed.json: the top level is not an object: not the JSON of `deadsim hunt --json`"),
        "{err}"
    );
    for (flag, value, needle) in
        [("--max-steps", "5000", "`max_steps` differs"), ("--keep-going", "", "--keep-going shard")]
    {
        let mut args = vec!["hunt", "flink", "--seeds", "0..6000", "--shard", "1/3", "--json", flag];
        if !value.is_empty() {
            args.push(value);
        }
        let (_, out, _) = deadsim(&args);
        let other = dir.join("other.json");
        std::fs::write(&other, out).unwrap();
        let (code, _, err) = deadsim(&["merge", &files[0], other.to_str().unwrap(), &files[2]]);
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(err.contains(needle), "{flag}: {err}");
    }
    // Other parameters: the error names the one that differs, not two whole objects.
    let (_, out, _) = deadsim(&["hunt", "flink", "--seeds", "0..6000", "--shard", "1/3", "--json", "--exclusive", "2"]);
    let other = dir.join("other.json");
    std::fs::write(&other, out).unwrap();
    let (code, _, err) = deadsim(&["merge", &files[0], other.to_str().unwrap(), &files[2]]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`params` differs from") && err.trim_end().ends_with(": exclusive 2 vs 3"), "{err}");
    // A shard of another build of deadsim (its `deadsim` version) may run a seed otherwise:
    // refused, first or not.
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
    assert_eq!(v["deadsim"], env!("CARGO_PKG_VERSION"));
    v["deadsim"] = json!("0.0.9");
    std::fs::write(&other, v.to_string()).unwrap();
    let want = format!("other.json: made by deadsim 0.0.9, and this is deadsim {}", env!("CARGO_PKG_VERSION"));
    for args in [
        ["merge", &files[0], other.to_str().unwrap(), &files[2]],
        ["merge", other.to_str().unwrap(), &files[0], &files[2]],
    ] {
        let (code, _, err) = deadsim(&args);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&want), "{err}");
    }
    // A shard that does not say its version is an older build's.
    v.as_object_mut().unwrap().remove("deadsim");
    std::fs::write(&other, v.to_string()).unwrap();
    let (code, _, err) = deadsim(&["merge", &files[0], other.to_str().unwrap(), &files[2]]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("other.json: made by a deadsim that did not say its version"), "{err}");
    // A shard whose fields do not fit each other or the split: refused,
    // naming the file and the field.
    let whole0: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    for (field, value) in [
        ("shard", json!("5/3")),
        ("seeds", json!("0..=10")),
        ("seed", json!(5999)),
        ("verdict", json!("banana")),
        ("schedule", json!("ds1:abba:deadbeef:1")),
        ("complete", json!(false)),
    ] {
        let mut v = whole0.clone();
        v[field] = value;
        let f = dir.join("tampered.json");
        std::fs::write(&f, v.to_string()).unwrap();
        let (code, out, err) = deadsim(&["merge", f.to_str().unwrap(), &files[1], &files[2]]);
        assert_eq!((code, out.as_str()), (2, ""), "{field}: {err}");
        assert!(err.contains(&format!("tampered.json: field `{field}`")), "{field}: {err}");
    }
    // A shard that did not stop early and found no failure ran all its
    // seeds: one that says it covered fewer is refused.
    let mut v = whole0.clone();
    assert!(v["seed"].is_null() && v["stopped_early"] == json!(false), "{v}");
    let first = v["covered"].as_str().unwrap().split("..").next().unwrap().to_string();
    v["covered"] = json!(format!("{first}..=10"));
    v["schedules"] = json!(11 - first.parse::<u64>().unwrap());
    let f = dir.join("tampered.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let (code, out, err) = deadsim(&["merge", f.to_str().unwrap(), &files[1], &files[2]]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("tampered.json: field `stopped_early` is false, but the shard covered"), "{err}");
    // The lowest failure's report is made again from its seed, so an edited
    // field of the shard that holds it is refused, naming the field; so is
    // a reason to stop in a shard that did not stop.
    let holder: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
    assert!(holder["seed"].is_u64(), "the lowest failure is in shard 1: {holder}");
    for (base, field, value) in [
        (&holder, "replay", json!("rm -rf /")),
        (&holder, "schedule", json!(format!("{}.1", holder["schedule"].as_str().unwrap()))),
        (&holder, "cycle", json!([])),
        (&holder, "message", json!("hello")),
        (&whole0, "stopped", json!("banana")),
        (&whole0, "lock_order", json!(null)),
        (&whole0, "lock_order", json!([])),
        (&whole0, "stopped", json!("time-budget")),
    ] {
        let mut v = base.clone();
        v[field] = value;
        let f = dir.join("tampered.json");
        std::fs::write(&f, v.to_string()).unwrap();
        let mut merge = vec!["merge", f.to_str().unwrap()];
        merge.extend(files.iter().filter(|g| **g != files[if base == &holder { 1 } else { 0 }]).map(String::as_str));
        let (code, out, err) = deadsim(&merge);
        assert_eq!((code, out.as_str()), (2, ""), "{field}: {err}");
        assert!(err.contains(&format!("tampered.json: field `{field}`")), "{field}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!err.contains("  "), "a message wrapped in the source keeps its indent: {err}");
    }
    // Counts that the seeds it ran cannot give, and lock-order facts from
    // seeds it did not run: refused alike, naming the field.
    assert!(!whole0["lock_order"]["edges"].as_array().unwrap().is_empty(), "{whole0}");
    let kg1: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&args[2]).unwrap()).unwrap();
    assert_eq!(kg1["seeds"], "250..=499");
    assert!(kg1["failures"].as_u64().unwrap() > 1, "{kg1}");
    let kg_others = [args[1].as_str(), args[3].as_str(), args[4].as_str()];
    for (base, pointer, value, field) in [
        (&whole0, "/schedules", json!(10), "schedules"),
        (&holder, "/seed", json!(holder["seed"].as_u64().unwrap() + 2), "schedules"),
        (&whole0, "/lock_order/edges/0/seed", json!(4500), "lock_order.edges"),
        (&kg1, "/failures", json!(5000), "failures"),
        (&kg1, "/failures", json!(-1), "failures"),
        (&kg1, "/distinct/0/seed", json!(5), "distinct[0].seed"),
        (&kg1, "/distinct/0/count", json!(0), "distinct[0].count"),
        (&kg1, "/distinct/0/verdict", json!("panic"), "distinct[0].verdict"),
        (&kg1, "/distinct", json!([]), "distinct"),
        (&kg1, "/schedules", json!(10), "schedules"),
        (&kg1, "/keep_going", json!(false), "keep_going"),
        (&whole0, "/keep_going", json!(true), "keep_going"),
    ] {
        let mut v = base.clone();
        *v.pointer_mut(pointer).unwrap() = value;
        let f = dir.join("tampered.json");
        std::fs::write(&f, v.to_string()).unwrap();
        let f = f.to_str().unwrap();
        let merge: Vec<&str> = if base == &kg1 {
            vec!["merge", kg_others[0], f, kg_others[1], kg_others[2]]
        } else if base == &holder {
            vec!["merge", &files[0], f, &files[2]]
        } else {
            vec!["merge", f, &files[1], &files[2]]
        };
        let (code, out, err) = deadsim(&merge);
        assert_eq!((code, out.as_str()), (2, ""), "{pointer}: {err}");
        assert!(err.contains(&format!("tampered.json: field `{field}`")), "{pointer}: {err}");
        if pointer == "/seed" {
            // Which of the two was edited cannot be told: both are named.
            assert!(err.contains("but field `seed` is "), "{err}");
        }
    }
    // A write-lock fact from a seed it did not run, as an edge is; and a
    // shard from before write-lock facts were kept (its writers would be
    // taken for none, and another shard's read locks for no waits).
    let mut v = whole0.clone();
    v["lock_order"]["written"] =
        json!([{"seed": 4500, "i": 0, "lock": "mu", "class": null, "at": null, "task": "main"}]);
    let f = dir.join("tampered.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let (code, _, err) = deadsim(&["merge", f.to_str().unwrap(), &files[1], &files[2]]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tampered.json: field `lock_order.written` has a write-lock fact from seed 4500"), "{err}");
    v["lock_order"].as_object_mut().unwrap().remove("written");
    std::fs::write(&f, v.to_string()).unwrap();
    let (code, _, err) = deadsim(&["merge", f.to_str().unwrap(), &files[1], &files[2]]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tampered.json: lock_order: `written` is missing: made by an older deadsim"), "{err}");
    // A fact's field of the wrong type is refused by its path: taken for
    // an absent one, a frame would have read "taken at <task body>" in the
    // merged findings.
    assert!(whole0["lock_order"]["edges"].as_array().is_some_and(|e| !e.is_empty()), "{whole0}");
    for (field, value, why) in [
        ("from_at", json!(5), "lock_order.edges[0].from_at: is a number, not a frame"),
        (
            "to_at",
            json!({"name": "x"}),
            "lock_order.edges[0].to_at: is an object without text `name` and `site`, not a frame or null",
        ),
        ("from_read", json!("yes"), "lock_order.edges[0].from_read: is text, not true or false"),
        ("recursive", json!(7), "lock_order.edges[0].recursive: is a number, not true or false"),
        ("class_from", json!([1]), "lock_order.edges[0].class_from: is a list, not text (a lock class) or null"),
        ("from", json!(1), "lock_order.edges[0].from: is a number, not text"),
        ("i", json!("x"), "lock_order.edges[0].i: is text, not a whole number"),
    ] {
        let mut v = whole0.clone();
        v["lock_order"]["edges"][0][field] = value;
        std::fs::write(&f, v.to_string()).unwrap();
        let (code, out, err) = deadsim(&["merge", f.to_str().unwrap(), &files[1], &files[2]]);
        assert_eq!((code, out.as_str(), err.lines().count()), (2, "", 1), "{field}: {err}");
        assert!(err.contains(&format!("tampered.json: {why}")), "{field}: {err}");
    }
    // A shard stopped early: the schedules are those run, and a failure
    // above a seed no shard ran is not claimed as the lowest.
    let (_, early, _) =
        deadsim(&["hunt", "flink", "--seeds", "0..6000", "--shard", "0/3", "--time-budget", "0.000001", "--json"]);
    let f = dir.join("early.json");
    std::fs::write(&f, early).unwrap();
    let e: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    assert_eq!((&e["stopped_early"], &e["seed"]), (&json!(true), &json!(null)), "{e}");
    let (code, merged) = json(&["merge", f.to_str().unwrap(), &files[1], &files[2]]);
    assert_eq!(code, 1);
    // The lowest failure of 0..6000 is in shard 1/3 (2000..=3999).
    let seed = merged["seed"].as_u64().unwrap();
    assert!((2000..4000).contains(&seed), "{merged}");
    let ran_below = e["schedules"].as_u64().unwrap();
    assert!(ran_below < 2000, "{e}");
    assert_eq!(merged["schedules"].as_u64().unwrap(), ran_below + seed - 2000 + 1, "{merged}");
    assert_eq!(merged["lowest"], json!(false), "{merged}");
    assert!(merged["warning"].as_str().unwrap().contains("a lower one may fail too"), "{merged}");
}

#[test]
fn shrink_says_whether_it_proved_the_fewest_preemptions_or_ran_out_of_tries() {
    let (code, out, _) = deadsim(&["shrink", "philosophers", "--seed", "0"]);
    assert_eq!(code, 1);
    assert!(out.contains("to 1 preemption and 11 steps"), "{out}");
    assert!(out.contains("No schedule with fewer preemptions fails this way"), "{out}");
    assert!(!out.contains("ran out"), "{out}");
    // A budget that ends in the exploration, before any proof.
    let (code, out, _) = deadsim(&["shrink", "philosophers", "--seed", "0", "--max-tries", "300"]);
    assert_eq!(code, 1);
    // It says how far the search got: every schedule with 0 preemptions
    // was tried, and it was in those with 1 (of the 4 of the best it has).
    assert!(
        out.contains(
            "The try budget (--max-tries 300) ran out while the search tried the schedules with 1 preemption \
             (none with fewer fails this way), before it could show whether one with fewer than 4 does: a larger \
             one may shrink it further.\n(297 of the 300 ran: the search keeps the last 3 back to check a schedule \
             it finds.)\n"
        ),
        "{out}"
    );
    // Counted alike in the headline and the JSON.
    assert!(out.contains("(297 tries); same failure"), "{out}");
    assert!(!out.contains("No schedule with fewer"), "{out}");
    let (_, v) = json(&["shrink", "philosophers", "--seed", "0", "--max-tries", "300", "--json"]);
    assert_eq!((v["fewest_preemptions_at_least"].as_u64(), v["preemptions"].as_u64()), (Some(1), Some(4)), "{v}");
    let (_, v) = json(&["shrink", "philosophers", "--seed", "0", "--json"]);
    assert_eq!((v["fewest_preemptions_at_least"].as_u64(), v["preemptions"].as_u64()), (Some(1), Some(1)), "{v}");
    // Nothing to shrink is nothing found.
    let (code, out, _) = deadsim(&["shrink", "abba", "--fixed", "--seed", "0"]);
    assert_eq!(code, 0);
    assert!(out.contains("this run does not fail"), "{out}");
}

#[test]
fn a_trace_that_cannot_be_written_is_refused_before_the_work() {
    for args in [
        &["hunt", "abba", "--trace", "/proc/self/no.json"][..],
        &["replay", "abba", "--seed", "0", "--trace", "/proc/self/no.json"][..],
        &["shrink", "abba", "--seed", "0", "--trace", "/proc/self/no.json"][..],
    ] {
        let (code, out, err) = deadsim(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.contains("--trace /proc/self/no.json: cannot write there"), "{args:?}: {err}");
    }
}

#[test]
fn a_parameter_typed_another_way_is_the_same_parameter() {
    let (_, v) = json(&["run", "abba", "--rounds", "3", "--seed", "0", "--json"]);
    let schedule = v["schedule"].as_str().unwrap();
    let (code, _, err) = deadsim(&["replay", "abba", "--rounds", "03", "--schedule", schedule]);
    assert_eq!(code, 1, "{err}");
    let (_, v) = json(&["run", "abba", "--rounds", "+3", "--seed", "0", "--json"]);
    assert_eq!(v["params"], json(&["run", "abba", "--seed", "0", "--json"]).1["params"]);
}

#[test]
fn a_step_limit_replays_with_its_limit() {
    let (code, out, _) = deadsim(&["run", "abba", "--fixed", "--max-steps", "3"]);
    assert_eq!(code, 1);
    let line = out.lines().find(|l| l.starts_with("replay: ")).expect("a replay line");
    assert!(line.contains("--max-steps 3"), "{line}");
    let args: Vec<&str> = line["replay: deadsim ".len()..].split(' ').collect();
    let (code, out, err) = deadsim(&args);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("step limit"), "{out}");
    // The tasks blocked at the limit, in the text and the JSON.
    let run = ["run", "ttrpc", "--server", "v1.2.4", "--client", "v1.2.4", "--max-steps", "60"];
    let (code, out, _) = deadsim(&run);
    assert_eq!(code, 1);
    assert!(out.contains("Blocked at the limit:\n\"main\" (task 0): waiting for \"caller-0\""), "{out}");
    let (_, v) = json(&[&run[..], &["--json"]].concat());
    let blocked = v["blocked"].as_array().expect("a list");
    assert!(blocked.iter().any(|b| b["task"] == "caller-2" && b["op"] == "write"), "{v}");
    // And those able to run there, in the text's "Still running" line too.
    let running = v["running"].as_array().expect("a list");
    assert!(!running.is_empty(), "{v}");
    for r in running {
        assert!(r["started"].is_boolean() && r["id"].is_u64(), "{v}");
        assert!(!blocked.iter().any(|b| b["id"] == r["id"]), "{v}");
        let name = format!("\"{}\"", r["task"].as_str().unwrap());
        let line = out.lines().find(|l| l.starts_with("Still running at the limit: ")).expect("the line");
        assert!(!r["started"].as_bool().unwrap() || line.contains(&name), "{line}");
    }
    let (_, v) = json(&["run", "abba", "--fixed", "--json"]);
    assert_eq!((&v["blocked"], &v["running"]), (&serde_json::json!([]), &serde_json::json!([])), "{v}");
}

#[test]
fn check_determinism_runs_each_schedule_twice_and_says_so() {
    let args = ["hunt", "abba", "--fixed", "--seeds", "0..50", "--check-determinism", "--jobs", "2"];
    let (code, out, err) = deadsim(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("determinism checked: each of the 50 schedules ran twice"), "{out}");
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let (code, v) = json(&with_json);
    assert_eq!(code, 0);
    assert_eq!((v["check_determinism"].as_bool(), v["schedules"].as_u64()), (Some(true), Some(50)), "{v}");
    // A deadlock is still found, at the same lowest seed as without the check.
    let (code, checked) = json(&["hunt", "abba", "--seeds", "0..50", "--check-determinism", "--json"]);
    let (_, plain) = json(&["hunt", "abba", "--seeds", "0..50", "--json"]);
    assert_eq!(code, 1);
    assert_eq!((&checked["seed"], &checked["cycle"]), (&plain["seed"], &plain["cycle"]), "{checked}");
}

#[test]
fn keep_going_reports_the_share_and_distinct_failures() {
    let (code, v) = json(&["hunt", "abba", "--keep-going", "--seeds", "0..500", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["schedules"], 500);
    // The failures are the seeds of 0..500 that deadlock, counted here one by one.
    let abba = sim::models::find("abba").unwrap().configure(&[]).unwrap();
    let failing = (0..500).filter(|&seed| abba.run(seed, false).outcome.is_failure()).count() as u64;
    assert!(failing > 0 && failing < 500, "abba deadlocks on some seeds, not all: {failing}");
    assert_eq!(v["failures"].as_u64(), Some(failing), "{v}");
    let share = v["share"]["failing"].as_f64().unwrap();
    assert_eq!(share, failing as f64 / 500.0);
    // Wilson's 95% interval for `failing` of 500, worked out here.
    let (n, p, z) = (500.0, share, 1.959964f64);
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    let ci = v["share"]["ci95"].as_array().unwrap();
    assert!((ci[0].as_f64().unwrap() - (centre - half)).abs() < 1e-4, "{ci:?}");
    assert!((ci[1].as_f64().unwrap() - (centre + half)).abs() < 1e-4, "{ci:?}");
    assert_eq!(v["distinct"].as_array().unwrap().len(), 1);
    assert_eq!(v["distinct"][0]["seed"], v["seed"]);
    assert!(v["warnings"][0]["kind"] == "circular-locking-dependency", "{}", v["warnings"]);
    // The report lists the distinct failures commonest first.
    let (code, out, _) =
        deadsim(&["hunt", "flink", "--fix", "self-assign-clear", "--keep-going", "--seeds", "0..300", "--jobs", "1"]);
    assert_eq!(code, 1);
    let counts: Vec<u64> = out
        .lines()
        .filter(|l| l.contains(" x  lowest seed "))
        .map(|l| l.split(" x ").next().unwrap().trim().parse().unwrap())
        .collect();
    assert!(counts.len() >= 3, "{out}");
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
}

/// True once process `pid` catches SIGINT (Linux: bit 2 of `SigCgt` in
/// /proc/PID/status), so a Ctrl-C sent then reaches deadsim's handler rather
/// than killing a process still starting. `None` where there is no /proc.
fn catches_sigint(pid: u32) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:"))?.trim();
    Some(u64::from_str_radix(mask, 16).ok()? & (1 << (2 - 1)) != 0)
}

/// Runs deadsim with `args`, sends it Ctrl-C (SIGINT) half a second after its
/// handler is in place, and returns its exit code and stdout.
fn interrupted_after_half_a_second(args: &[&str]) -> (Option<i32>, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_deadsim"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..1000 {
        match catches_sigint(child.id()) {
            Some(true) => break,
            Some(false) => std::thread::sleep(std::time::Duration::from_millis(10)),
            // No /proc: a second is ample for the process to start.
            None => {
                std::thread::sleep(std::time::Duration::from_millis(1000));
                break;
            }
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn an_interrupted_hunt_reports_what_it_covered() {
    let (code, stdout) =
        interrupted_after_half_a_second(&["hunt", "abba", "--fixed", "--seeds", "0..1000000000", "--jobs", "1"]);
    assert_eq!(code, Some(130), "interrupted with nothing found is not a pass: {stdout}");
    assert!(stdout.contains("interrupted after"), "{stdout}");
    assert!(stdout.contains("covered of 0..=999999999), no failure in them\n"), "{stdout}");
    // The verdict table stops too, with the rows it finished.
    let (code, stdout) = interrupted_after_half_a_second(&["hunt", "--seeds", "0..1000000000", "--jobs", "1"]);
    assert_eq!(code, Some(1), "abba deadlocks at seed 0: {stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("abba ") && l.contains("--fixed") && l.contains("interrupted")),
        "{stdout}"
    );
    assert!(stdout.contains("interrupted: 2 of 16 variants hunted"), "{stdout}");
    // In the JSON, the row stopped has no verdict to match: not a mismatch,
    // and the table's all_expected is not known, not false.
    let (code, stdout) =
        interrupted_after_half_a_second(&["hunt", "--seeds", "0..1000000000", "--jobs", "1", "--json"]);
    assert_eq!(code, Some(1), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    let rows = v["variants"].as_array().expect("rows");
    let last = rows.last().expect("a row");
    assert_eq!((&last["verdict"], &last["matches"]), (&json!("interrupted"), &json!(null)), "{v}");
    assert!(rows[..rows.len() - 1].iter().all(|r| r["matches"] == json!(true)), "{v}");
    assert_eq!(v["all_expected"], json!(null), "{v}");
}

#[test]
fn an_exploration_too_large_to_finish_stops_at_its_budget_and_says_which() {
    // ttrpc's default cell has far more schedules than a fraction of a second covers.
    // A unit is taken too: 300ms is the 0.3 s the message gives.
    let (code, stdout, _) = deadsim(&["explore", "ttrpc", "--time-budget", "300ms"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("but the time budget (--time-budget 0.3) ran out before every schedule was covered"),
        "{stdout}"
    );
    let (code, v) = json(&["hunt", "ttrpc", "--strategy", "dfs", "--time-budget", "0.3", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["stopped"].as_str(), v["exhausted"].as_bool()), (Some("time-budget"), Some(false)), "{v}");
    assert!(v["executions"].as_u64().unwrap() > 0, "{v}");
    // The other ends: the execution budget, an exhausted search, Ctrl-C.
    let (_, v) = json(&["explore", "abba", "--fixed", "--max-executions", "3", "--json"]);
    assert_eq!((v["stopped"].as_str(), v["executions"].as_u64()), (Some("max-executions"), Some(3)), "{v}");
    let (_, v) = json(&["explore", "abba", "--fixed", "--preemptions", "3", "--max-executions", "50", "--json"]);
    assert_eq!((v["stopped"].as_str(), v["proved_within"].as_u64()), (Some("max-executions"), Some(1)), "{v}");
    // `hunt --strategy dfs` is the same search, with the same flags.
    let args = ["abba", "--fixed", "--preemptions", "3", "--max-executions", "50", "--json"];
    let (_, h) = json(&[&["hunt", "--strategy", "DFS"][..], &args].concat());
    assert_eq!(h, json(&[&["explore"][..], &args].concat()).1);
    let (_, h) = json(&["hunt", "abba", "--fixed", "--strategy", "dfs", "--no-reduction", "--json"]);
    assert_eq!((h["reduction"].as_bool(), h["executions"].as_u64()), (Some(false), Some(160)), "{h}");
    let (_, stdout, _) = deadsim(&["explore", "abba", "--fixed", "--preemptions", "3", "--max-executions", "50"]);
    assert!(stdout.contains("before every schedule within 2 preemptions (on the way to the 3 asked for) was covered (every schedule within 1 preemption was covered"), "{stdout}");
    // Exhausted below the bound asked for (no schedule has more than 6
    // preemptions): the bound asked for is proved.
    let (code, v) = json(&["explore", "abba", "--fixed", "--preemptions", "100", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["exhausted"].as_bool(), v["proved_within"].as_u64()), (Some(true), Some(100)), "{v}");
    let (_, v) = json(&["explore", "abba", "--fixed", "--time-budget", "100", "--json"]);
    assert_eq!((v["stopped"].clone(), v["exhausted"].as_bool()), (serde_json::Value::Null, Some(true)), "{v}");
    assert_eq!(v["complete"], serde_json::json!(true), "{v}");
    // A budget too small for anything still gives a result: the first
    // execution, or the first chunk of seeds, always runs.
    let (code, v) = json(&["explore", "abba", "--fixed", "--time-budget", "0.000001", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["executions"].as_u64(), v["complete"].as_bool()), (Some(1), Some(false)), "{v}");
    let (code, v) = json(&["hunt", "abba", "--fixed", "--time-budget", "0.000001", "--jobs", "2", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["stopped"].as_str(), v["complete"].as_bool()), (Some("time-budget"), Some(false)), "{v}");
    let covered: sim::hunt::SeedRange = v["covered"].as_str().unwrap().parse().unwrap();
    assert_eq!((covered.first, v["schedules"].as_u64()), (0, Some(covered.len())), "{v}");
    let n = v["schedules"].as_u64().unwrap();
    let s = if n == 1 { "" } else { "s" };
    let want =
        format!("time budget spent after {n} schedule{s} (seeds {covered} covered of 0..=9999), no failure in them");
    assert_eq!(v["message"].as_str(), Some(want.as_str()), "{v}");
    let (code, stdout) = interrupted_after_half_a_second(&["explore", "ttrpc"]);
    assert_eq!(code, Some(130), "{stdout}");
    assert!(stdout.contains("but it was interrupted before every schedule was covered"), "{stdout}");
}

#[test]
fn replay_and_shrink_print_json_as_run_does() {
    let (code, run) = json(&["run", "abba", "--seed", "0", "--json"]);
    assert_eq!(code, 1);
    let (code, replayed) = json(&["replay", "abba", "--seed", "0", "--json"]);
    assert_eq!((code, &replayed), (1, &run), "replay of a seed is that seed's run");
    let schedule = run["schedule"].as_str().unwrap();
    let (code, by_schedule) = json(&["replay", "abba", "--schedule", schedule, "--json"]);
    assert_eq!(code, 1);
    assert_eq!(
        (by_schedule["seed"].clone(), by_schedule["strategy"].as_str()),
        (serde_json::Value::Null, Some("replay"))
    );
    assert_eq!((&by_schedule["cycle"], &by_schedule["steps"]), (&run["cycle"], &run["steps"]));
    let (code, shrunk) = json(&["shrink", "philosophers", "--seed", "0", "--json"]);
    assert_eq!(code, 1);
    assert_eq!((shrunk["shrunk"].as_bool(), shrunk["from_seed"].as_u64()), (Some(true), Some(0)), "{shrunk}");
    assert!(shrunk["preemptions"].as_u64() < shrunk["original"]["preemptions"].as_u64(), "{shrunk}");
    assert_eq!(shrunk["fewest_preemptions_proved"].as_bool(), Some(true), "{shrunk}");
    // The shrunk schedule replays to the same cycle.
    let (_, again) = json(&["replay", "philosophers", "--schedule", shrunk["schedule"].as_str().unwrap(), "--json"]);
    assert_eq!((&again["cycle"], &again["steps"]), (&shrunk["cycle"], &shrunk["steps"]));
    let (code, nothing) = json(&["shrink", "abba", "--fixed", "--seed", "0", "--json"]);
    assert_eq!((code, nothing["shrunk"].as_bool()), (0, Some(false)));
}

/// A set of charts whose last one cannot be written leaves the charts that
/// were there as they were: every chart is written beside its place first.
#[cfg(unix)]
#[test]
fn a_chart_that_cannot_be_written_leaves_the_older_charts_alone() {
    let dir = Scratch::new("cli-keep");
    let trace = dir.join("ab.json");
    let (code, _, err) = deadsim(&["run", "abba", "--trace", trace.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    for chart in ["timeline", "locks"] {
        std::fs::write(dir.join(format!("ab-{chart}.png")), format!("old {chart}")).unwrap();
    }
    // The wait-for chart, written last, goes through a link into a folder that is not there.
    std::os::unix::fs::symlink(dir.join("gone/waitfor.png"), dir.join("ab-waitfor.png")).unwrap();
    let out = format!("{}/", dir.display());
    let (code, _, err) = deadsim(&["render", trace.to_str().unwrap(), "--chart", "all", "-o", &out]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot write") && err.contains("ab-waitfor.png"), "{err}");
    for chart in ["timeline", "locks"] {
        assert_eq!(std::fs::read_to_string(dir.join(format!("ab-{chart}.png"))).unwrap(), format!("old {chart}"));
    }
    let mut left: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, ["ab-locks.png", "ab-timeline.png", "ab-waitfor.png", "ab.json"], "no temporary file left");
}

/// `run --render` removes an older chart of a kind its run has none of only
/// once its own charts are in place: a run that fails to write keeps it.
#[cfg(target_os = "linux")]
#[test]
fn a_run_that_cannot_write_its_files_keeps_the_older_charts() {
    let dir = Scratch::new("cli-older");
    let out = format!("{}/", dir.display());
    let (code, _, err) = deadsim(&["run", "abba", "--render", &out]);
    assert_eq!(code, 1, "{err}");
    let names = || {
        let mut n: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        n.sort();
        n
    };
    let before = names();
    assert_eq!(before.len(), 3, "{before:?}");
    // Cut short before anything locks: no locks or wait-for chart of its
    // own; and its trace cannot be written (a full disk).
    let (code, _, err) = deadsim(&["run", "abba", "--render", &out, "--trace", "/dev/full", "--max-steps", "3"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--trace /dev/full: cannot write the trace"), "{err}");
    assert_eq!(names(), before, "the older charts are kept");
}

#[test]
fn render_draws_a_trace_and_refuses_bad_paths() {
    let dir = Scratch::new("cli-render");
    let trace = dir.join("abba.json");
    let t = trace.to_str().unwrap();
    let (code, _, _) = deadsim(&["run", "abba", "--trace", t]);
    assert_eq!(code, 1, "abba deadlocks on seed 0");
    let before = std::fs::read(&trace).unwrap();

    let png = dir.join("abba.png");
    let (code, out, err) = deadsim(&["render", t, "--out", png.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    assert_eq!((out.as_str(), err.trim_end()), ("", format!("wrote {}", png.display()).as_str()), "news on stderr");

    // Extensions in any case.
    let upper = dir.join("abba.SVG");
    let (code, _, err) = deadsim(&["render", t, "-o", upper.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&upper).unwrap().starts_with("<svg"));

    // `-o -`: the chart on stdout and nothing else, no file named `-`.
    let (code, out, err) = deadsim(&["render", t, "-o", "-", "--format", "svg"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("<svg") && out.trim_end().ends_with("</svg>"), "{out}");
    assert!(!std::path::Path::new("-").exists());
    let (code, _, err) = deadsim(&["render", t, "-o", "-", "--chart", "all"]);
    assert_eq!(code, 2);
    assert!(err.contains("-o -: --chart all writes several files"), "{err}");
    // A chart asked for by name with nothing to show is refused, not drawn empty.
    let pipes = dir.join("pipes.svg");
    let (code, _, err) = deadsim(&["render", t, "--chart", "pipes", "-o", pipes.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("--chart pipes: ") && err.contains("abba.json has no pipes; nothing to draw"), "{err}");
    assert!(!pipes.exists());

    // Writing over the input would lose the trace.
    let (code, _, err) = deadsim(&["render", t, "--out", t, "--format", "svg"]);
    assert_eq!(code, 2);
    assert!(err.contains("this is the input trace"), "{err}");
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    // So would writing over another name of it (a hard link).
    #[cfg(unix)]
    {
        let other = dir.join("same-file.json");
        std::fs::hard_link(&trace, &other).unwrap();
        let (code, _, err) = deadsim(&["render", t, "--out", other.to_str().unwrap(), "--format", "svg"]);
        assert_eq!(code, 2);
        assert!(err.contains("same-file.json: this is the input trace"), "{err}");
        assert_eq!(std::fs::read(&other).unwrap(), before);
        std::fs::remove_file(&other).unwrap();
    }

    // Something that is not a trace: one line naming the file, no image left behind.
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"not\": \"a trace\"}").unwrap();
    let out = dir.join("junk.svg");
    let (code, _, err) = deadsim(&["render", junk.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("junk.json"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!out.exists());

    // `run --render`: an error names --render, and no chart is written;
    // the trace of the run is (an older run's at the path is not left
    // there for a following `render tt.json` to draw as this run); the
    // report of the run still follows, and the exit is 2.
    let figs = dir.join("figs");
    std::fs::create_dir_all(figs.join("abba-a5167e82-seed0-locks.png")).unwrap();
    let tt = dir.join("tt.json");
    let figs_arg = format!("{}/", figs.display());
    let (code, _, err) = deadsim(&["run", "philosophers", "--trace", tt.to_str().unwrap()]);
    assert_eq!((code, tt.exists()), (1, true), "{err}");
    let (code, out, err) = deadsim(&["run", "abba", "--render", &figs_arg, "--trace", tt.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.starts_with("abba seed 0: deadlock after 5 steps"), "{out}");
    assert!(
        err.contains("--render: ")
            && err.contains(": cannot write there (it is a folder, not a file); no chart was written"),
        "{err}"
    );
    assert!(err.contains("; no chart was written, and --trace ") && err.contains("tt.json was written"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let written = std::fs::read_to_string(&tt).unwrap();
    assert!(written.contains("\"model\":\"abba\""), "the older trace was left");
    assert_eq!(std::fs::read_dir(&figs).unwrap().count(), 1, "a chart was left");
    let afile = dir.join("afile");
    std::fs::write(&afile, "x").unwrap();
    let (code, _, err) = deadsim(&["run", "abba", "--render", &format!("{}/", afile.display())]);
    assert_eq!(code, 2);
    assert!(err.contains("--render") && err.contains("is a file, not a folder"), "{err}");
}

#[test]
fn replay_and_shrink_draw_their_run_with_render() {
    let dir = Scratch::new("cli-replay-render");
    let figs = format!("{}/", dir.join("figs").display());
    // replay: the charts of the replayed run, named as run names them.
    let (code, _, err) = deadsim(&["replay", "abba", "--seed", "0", "--render", &figs]);
    assert_eq!(code, 1, "{err}");
    let names = |d: &str| {
        let mut v: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        v.sort();
        v
    };
    let want = ["locks", "timeline", "waitfor"];
    assert_eq!(names(&figs), want.map(|c| format!("abba-a5167e82-seed0-{c}.png")), "{err}");
    // The replayed run's charts are the run's own, byte for byte.
    let run_figs = format!("{}/", dir.join("run").display());
    let (code, _, _) = deadsim(&["run", "abba", "--seed", "0", "--render", &run_figs]);
    assert_eq!(code, 1);
    for c in want {
        let f = format!("abba-a5167e82-seed0-{c}.png");
        assert_eq!(std::fs::read(format!("{figs}{f}")).unwrap(), std::fs::read(format!("{run_figs}{f}")).unwrap());
    }
    // A run --max-steps stopped is another run: named apart, it leaves the
    // whole run's charts as they were.
    let (code, _, err) = deadsim(&["run", "abba", "--seed", "0", "--max-steps", "3", "--render", &run_figs]);
    assert_eq!(code, 1, "{err}");
    let mut both: Vec<String> = want.map(|c| format!("abba-a5167e82-seed0-{c}.png")).into();
    both.push("abba-a5167e82-seed0-limit3-timeline.png".into());
    both.sort();
    assert_eq!(names(&run_figs), both, "{err}");
    for c in want {
        let f = format!("abba-a5167e82-seed0-{c}.png");
        assert_eq!(std::fs::read(format!("{figs}{f}")).unwrap(), std::fs::read(format!("{run_figs}{f}")).unwrap());
    }
    // shrink: the shrunk run's charts, then its trace; the charts draw that trace.
    let shrunk = format!("{}/", dir.join("shrunk").display());
    let t = dir.join("s.json");
    let (code, out, err) =
        deadsim(&["shrink", "abba", "--seed", "3", "--render", &shrunk, "--trace", t.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("to 1 preemption and 5 steps"), "{out}");
    // Named by the shrunk schedule, not the seed: `abba-a5167e82-shrink-XXXXXXXX-timeline.png`.
    let shrunk_names = names(&shrunk);
    let tag = shrunk_names[0].strip_prefix("abba-a5167e82-shrink-").unwrap().split('-').next().unwrap().to_string();
    assert!(tag.len() == 8 && tag.bytes().all(|b| b.is_ascii_hexdigit()), "{shrunk_names:?}");
    assert_eq!(shrunk_names, want.map(|c| format!("abba-a5167e82-shrink-{tag}-{c}.png")));
    let drawn = dir.join("drawn.png");
    let (code, _, err) = deadsim(&["render", t.to_str().unwrap(), "-o", drawn.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(&drawn).unwrap(),
        std::fs::read(format!("{shrunk}abba-a5167e82-shrink-{tag}-timeline.png")).unwrap()
    );
    // Two replayed schedules draw to two sets of names.
    let replays = format!("{}/", dir.join("replays").display());
    for schedule in ["ds1:abba:a5167e82:1.2x2.1", "ds1:abba:a5167e82:2x2.1x2"] {
        let (code, _, err) = deadsim(&["replay", "abba", "--schedule", schedule, "--render", &replays]);
        assert_eq!(code, 1, "{err}");
    }
    assert_eq!(names(&replays).len(), 6, "{:?}", names(&replays));
    // A chart that cannot be written: said at once, the report follows,
    // exit 2; the trace is written.
    let blocked = dir.join("blocked");
    std::fs::create_dir_all(blocked.join(format!("abba-a5167e82-shrink-{tag}-locks.png"))).unwrap();
    let t2 = dir.join("s2.json");
    let (code, out, err) = deadsim(&[
        "shrink",
        "abba",
        "--seed",
        "3",
        "--render",
        &format!("{}/", blocked.display()),
        "--trace",
        t2.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("it is a folder, not a file); no chart")
            && err.ends_with(&format!(
                "no chart was written, and --trace {} was written; the report follows\n",
                t2.display()
            )),
        "{err}"
    );
    assert!(out.contains("same failure"), "{out}");
    assert!(t2.exists());
    // Nothing to shrink: nothing drawn, and said so.
    let none = format!("{}/", dir.join("none").display());
    let (code, _, err) = deadsim(&["shrink", "abba", "--fixed", "--seed", "0", "--render", &none]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no failure, so no charts were drawn"), "{err}");
    assert!(!dir.join("none").exists());
}

#[test]
fn models_json_gives_each_variant_as_flags_that_run_it() {
    let (code, v) = json(&["models", "--json"]);
    assert_eq!(code, 0);
    let listed = v["models"].as_array().unwrap();
    let names: Vec<&str> = listed.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, sim::models::all().iter().map(|m| m.name()).collect::<Vec<_>>());
    let mut variants = 0;
    for m in listed {
        let name = m["name"].as_str().unwrap();
        let model = sim::models::find(name).unwrap();
        assert_eq!(m["params"].as_array().unwrap().len(), model.params().len(), "{name}");
        assert_eq!(m["variants"].as_array().unwrap().len(), model.variants().len(), "{name}");
        for (listed, variant) in m["variants"].as_array().unwrap().iter().zip(model.variants()) {
            assert_eq!(listed["expect"], variant.expect.as_str(), "{name} {}", variant.label);
            // The flags, given to `run`, configure the variant's parameters.
            let args: Vec<&str> = listed["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
            let (code, run) = json(&[&["run", name, "--seed", "0", "--json"][..], &args].concat());
            assert!(code == 0 || code == 1, "{name} {args:?}: exit {code}");
            let want: serde_json::Map<String, serde_json::Value> = model
                .configure(&variant.params)
                .unwrap()
                .params
                .iter()
                .map(|p| {
                    // Each value of its kind: a flag a bool, a number a number.
                    let spec = model.params().iter().find(|s| s.name == p.name).unwrap();
                    let v = match spec.kind {
                        sim::models::ParamKind::Flag => json!(p.value == "true"),
                        sim::models::ParamKind::Int { .. } => json!(p.value.parse::<u64>().unwrap()),
                        sim::models::ParamKind::Float { .. } => json!(p.value.parse::<f64>().unwrap()),
                        sim::models::ParamKind::Choice(_) => json!(p.value),
                    };
                    (p.name.clone(), v)
                })
                .collect();
            assert_eq!(run["params"], serde_json::Value::Object(want), "{name} {args:?}");
            variants += 1;
        }
    }
    let all: usize = sim::models::all().iter().map(|m| m.variants().len()).sum();
    assert!(all > 0);
    assert_eq!(variants, all, "every built-in variant was run from its listed flags");
    // One model alone; the matrix comes with its expected verdicts.
    let (code, v) = json(&["models", "ttrpc", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["models"].as_array().unwrap().len(), 1);
    let m = sim::models::find("ttrpc").unwrap().matrix().unwrap();
    assert_eq!(v["models"][0]["matrix"]["rows"]["param"], m.row_param);
    assert_eq!(v["models"][0]["matrix"]["expect"][0][0], m.expect[0][0].as_str());
}

#[test]
fn a_search_that_finds_nothing_leaves_no_older_trace_behind() {
    let dir = Scratch::new("cli-stale");
    let t = dir.join("t.json");
    let path = t.to_str().unwrap();
    for nothing in [
        &["hunt", "abba", "--fixed", "--seeds", "0..20", "--trace", path][..],
        &["explore", "abba", "--fixed", "--trace", path][..],
        &["shrink", "abba", "--fixed", "--seed", "0", "--trace", path][..],
    ] {
        let (code, _, _) = deadsim(&["hunt", "abba", "--trace", path]);
        assert_eq!(code, 1);
        assert!(t.exists(), "the failing hunt wrote its trace");
        let (code, _, err) = deadsim(nothing);
        assert_eq!(code, 0, "{nothing:?}: {err}");
        assert!(!t.exists(), "{nothing:?}: the earlier trace is gone, so no render draws it");
        assert!(
            err.contains("no failure, so no trace was written to")
                && err.contains("the earlier trace there was removed"),
            "{err}"
        );
        // Nothing there to begin with: nothing to say about removing.
        let (_, _, err) = deadsim(nothing);
        assert!(!err.contains("removed"), "{err}");
        // A file that is not a trace (a mistyped path) is left alone, and said so.
        std::fs::write(&t, "my notes\n").unwrap();
        let (code, _, err) = deadsim(nothing);
        assert_eq!(code, 0, "{nothing:?}: {err}");
        assert_eq!(std::fs::read_to_string(&t).unwrap(), "my notes\n", "{nothing:?}");
        assert!(err.contains("the file there is not a deadsim trace and was left as it was"), "{err}");
        std::fs::remove_file(&t).unwrap();
    }
}

#[test]
fn render_all_removes_an_older_chart_the_new_trace_has_none_for() {
    let dir = Scratch::new("cli-stale-charts");
    let (t, q) = (dir.join("t.json"), dir.join("q"));
    let (path, out) = (t.to_str().unwrap(), format!("{}/", q.display()));
    let waitfor = q.join("t-waitfor.png");
    assert_eq!(deadsim(&["run", "abba", "--trace", path]).0, 1);
    let (code, _, err) = deadsim(&["render", path, "--chart", "all", "-o", &out]);
    assert_eq!(code, 0, "{err}");
    assert!(waitfor.exists() && err.contains("skipped pipes: no pipes in ") && err.contains("t.json"), "{err}");
    // The same file name, now a run with no deadlock: its render has no
    // wait-for graph, and the deadlock's must not pass for one.
    assert_eq!(deadsim(&["run", "abba", "--fixed", "--trace", path]).0, 0);
    let (code, _, err) = deadsim(&["render", path, "--chart", "all", "-o", &out]);
    assert_eq!(code, 0, "{err}");
    assert!(!waitfor.exists(), "{err}");
    assert!(err.contains("skipped waitfor: ") && err.contains("t-waitfor.png is removed)"), "{err}");
    // A file of the user's under that name is not a chart: left alone.
    std::fs::write(&waitfor, "notes\n").unwrap();
    let (code, _, err) = deadsim(&["render", path, "--chart", "all", "-o", &out]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&waitfor).unwrap(), "notes\n");
    assert!(!err.contains("removed"), "{err}");
    assert!(err.contains("t-waitfor.png is not a chart, left as it was"), "{err}");
}

#[test]
fn the_matrix_replay_hint_carries_the_workload_and_the_step_limit() {
    let (code, out, err) = deadsim(&[
        "hunt",
        "ttrpc",
        "--matrix",
        "--unregistered-fraction",
        "0.5",
        "--seeds",
        "0..3",
        "--max-steps",
        "100000",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(
        out.contains(
            "Replay a cell: deadsim replay ttrpc --server S --client C --unregistered-fraction 0.5 --seed N --max-steps 100000"
        ),
        "{out}"
    );
    // Another workload: the expected verdicts do not apply, and the JSON
    // says so with nulls rather than a failure the table does not show.
    let (_, v) = json(&["hunt", "ttrpc", "--matrix", "--callers", "2", "--seeds", "0..3", "--json"]);
    assert_eq!((&v["default_workload"], &v["all_expected"]), (&json!(false), &json!(null)), "{v}");
    assert!(v["cells"].as_array().unwrap().iter().all(|c| c["matches"].is_null()), "{v}");
}

#[test]
fn output_that_cannot_be_written_is_one_line_and_exit_2() {
    // /dev/full takes no bytes: every write fails with "no space left".
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
    for args in [&["models"][..], &["run", "abba"], &["hunt", "abba", "--seeds", "0..3", "--json"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_deadsim"))
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .stdout(full.try_clone().unwrap())
            .output()
            .expect("deadsim runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("deadsim: error: cannot write the output to stdout ("), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn export_to_stdout_is_the_file_it_writes() {
    let dir = Scratch::new("export");
    let file = dir.join("p.json");
    let (code, _, err) = deadsim(&["export", "traces/abba-deadlock.json", "--perfetto", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // Worded as --trace's errors: the flag, the path, then why.
    let dir = file.parent().unwrap().to_str().unwrap().to_string();
    let (code, _, err) = deadsim(&["export", "traces/abba-deadlock.json", "--perfetto", &dir]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err, format!("deadsim: error: --perfetto {dir}: cannot write there (it is a folder, not a file)\n"));
    // render without -o writes beside the trace: an error there names no flag.
    let trace = dir.clone() + "/t.json";
    std::fs::copy("traces/abba-deadlock.json", &trace).unwrap();
    std::fs::create_dir(dir.clone() + "/t-timeline.png").unwrap();
    let (code, _, err) = deadsim(&["render", &trace]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        format!(
            "deadsim: error: the default output (no -o): {dir}/t-timeline.png: cannot write there (it is a folder, \
             not a file)\n"
        )
    );
    let (code, _, err) = deadsim(&["export", "traces/abba-deadlock.json", "--perfetto", "/proc/o.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("deadsim: error: --perfetto /proc/o.json: cannot write there ("), "{err}");
    let (code, out, err) = deadsim(&["export", "traces/abba-deadlock.json", "--perfetto", "-"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, std::fs::read_to_string(&file).unwrap());
}

#[test]
fn render_flags_are_checked_with_their_own_words() {
    for (args, want) in [
        (vec!["--width", "-5"], "--width -5: expected 600..=8000 pixels"),
        (vec!["--width", "abc"], "--width abc: expected 600..=8000 pixels"),
        (vec!["--window", "time:1us..99999999999s"], "`99999999999s` is too large"),
    ] {
        let mut all = vec!["render", "traces/abba-deadlock.json", "-o", "/nonexistent-dir/x.png"];
        all.extend(args);
        let (code, _, err) = deadsim(&all);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn render_says_which_flags_the_wait_for_graph_does_not_use() {
    // --x steps was ignored without a word (the graph is the same bytes).
    let dir = Scratch::new("cli-waitfor-x");
    let out = dir.join("g.svg");
    let out = out.to_str().unwrap();
    for (flag, value, note) in [
        ("--x", "steps", "note: --x does not apply to the wait-for graph"),
        ("--window", "last:5", "note: --window does not apply to the wait-for graph"),
    ] {
        let (code, _, err) =
            deadsim(&["render", "traces/abba-deadlock.json", "--chart", "waitfor", "-o", out, flag, value]);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains(note), "{flag}: {err}");
    }
    let (code, _, err) = deadsim(&["render", "traces/abba-deadlock.json", "--chart", "waitfor", "-o", out]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("does not apply"), "{err}");
    // A window outside the trace is refused as the timeline refuses it,
    // without the note, and nothing is written.
    let never = dir.join("never.svg");
    let (code, _, err) = deadsim(&[
        "render",
        "traces/abba-deadlock.json",
        "--chart",
        "waitfor",
        "-o",
        never.to_str().unwrap(),
        "--window",
        "steps:500..600",
    ]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        "deadsim: error: traces/abba-deadlock.json: window steps 500 to 599 is empty or outside the trace (steps 1 \
         to 5)"
    );
    assert!(!never.exists());
}

#[test]
fn a_step_limit_run_is_a_failure_that_shrink_reports_unshrunk() {
    let (code, out, err) = deadsim(&["shrink", "abba", "--seed", "0", "--max-steps", "3"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("hits the step limit (3 steps), which is not shrunk"), "{out}");
    assert!(out.contains("replay: deadsim replay abba --max-steps 3 --schedule ds1:abba:"), "{out}");
    let (code, v) = json(&["shrink", "abba", "--seed", "0", "--max-steps", "3", "--json"]);
    assert_eq!(code, 1);
    assert_eq!((&v["verdict"], &v["shrunk"], &v["steps"]), (&json!("step-limit"), &json!(false), &json!(3)), "{v}");
}

#[test]
fn merge_counts_the_whole_u64_range() {
    let dir = Scratch::new("cli-whole");
    let mut files = Vec::new();
    let mut ran = 0;
    for i in 0..2 {
        let shard = format!("{i}/2");
        let (code, out, err) = deadsim(&[
            "hunt",
            "abba",
            "--fixed",
            "--seeds",
            "0..=18446744073709551615",
            "--shard",
            &shard,
            "--time-budget",
            "0.05",
            "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        ran += v["schedules"].as_u64().unwrap();
        let f = dir.join(format!("s{i}.json"));
        std::fs::write(&f, out).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let (code, v) = json(&["merge", &files[0], &files[1]]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["schedules"].as_u64(), Some(ran), "{v}");
    let warning = v["warning"].as_str().unwrap();
    assert!(
        warning.starts_with(&format!("{ran} of the 18446744073709551616 seeds of 0..=18446744073709551615 covered")),
        "{v}"
    );
    assert_eq!((v["stopped"].as_str(), v["complete"].as_bool()), (Some("time-budget"), Some(false)), "{v}");
}

#[test]
fn every_search_json_has_the_common_fields_with_one_meaning() {
    let common =
        ["verdict", "seed", "schedules", "cycle", "model", "params", "strategy", "message", "schedule", "replay"];
    for args in [
        &["run", "abba", "--seed", "0", "--json"][..],
        &["hunt", "abba", "--seeds", "0..10", "--json"][..],
        &["explore", "abba", "--json"][..],
        &["replay", "abba", "--seed", "0", "--json"][..],
        &["shrink", "abba", "--seed", "0", "--json"][..],
    ] {
        let (code, v) = json(args);
        assert_eq!(code, 1, "{args:?}");
        for key in common.iter().chain(&["warnings"]) {
            assert!(v.get(key).is_some(), "{args:?}: no `{key}`: {v}");
        }
        assert_eq!(v["verdict"], "deadlock", "{args:?}");
        // `schedule` is the string, `replay` the command that replays it.
        let schedule = v["schedule"].as_str().unwrap();
        assert!(schedule.starts_with("ds1:abba:"), "{args:?}: {v}");
        assert_eq!(v["replay"].as_str().unwrap(), format!("deadsim replay abba --schedule {schedule}"), "{args:?}");
        assert!(v["message"].as_str().unwrap().starts_with("deadlock (global, 2 tasks in the cycle)"), "{args:?}");
    }
    // Nothing found: the same fields, with nothing to replay.
    for args in
        [&["hunt", "abba", "--fixed", "--seeds", "0..10", "--json"][..], &["explore", "abba", "--fixed", "--json"][..]]
    {
        let (code, v) = json(args);
        assert_eq!(code, 0, "{args:?}");
        for key in common {
            assert!(v.get(key).is_some(), "{args:?}: no `{key}`: {v}");
        }
        assert_eq!(
            (&v["schedule"], &v["replay"], &v["complete"]),
            (&json!(null), &json!(null), &json!(true)),
            "{args:?}"
        );
    }
    let (_, v) = json(&["explore", "abba", "--fixed", "--json"]);
    assert!(v["message"].as_str().unwrap().starts_with("proved: 35 executions, every schedule completes"), "{v}");
    assert_eq!(v["warnings"], json!([]), "a fixed lock order gives no finding: {v}");
    // explore's findings are over every execution, as hunt's are over its seeds: the same ones here.
    let model = ["ttrpc", "--client", "v1.2.4"];
    let (_, explored) = json(&[&["explore"][..], &model, &["--max-executions", "50", "--json"]].concat());
    let (_, hunted) = json(&[&["hunt"][..], &model, &["--seeds", "0..50", "--json"]].concat());
    assert_eq!(explored["verdict"], "no-deadlock", "{explored}");
    // The same findings; the example sites in the reports are each search's first.
    let summaries = |v: &serde_json::Value| {
        v["warnings"].as_array().unwrap().iter().map(|w| (w["kind"].clone(), w["summary"].clone())).collect::<Vec<_>>()
    };
    assert_eq!(summaries(&explored), summaries(&hunted), "{explored}");
    assert!(explored["warnings"][0]["summary"]
        .as_str()
        .unwrap()
        .contains("\"sendLock\" held across a blocking pipe write"));
    // explore's trace names where it came from (charts print it), not "replay".
    let t = std::env::temp_dir().join(format!("deadsim-cli-explore-{}.json", std::process::id()));
    let (code, _, _) = deadsim(&["explore", "abba", "--trace", t.to_str().unwrap()]);
    assert_eq!(code, 1);
    let trace: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&t).unwrap()).unwrap();
    assert_eq!(trace["meta"]["strategy"], "dfs");
    std::fs::remove_file(&t).unwrap();
    // explore names its bound `preemption_bound`; shrink's `preemptions` counts its schedule's own.
    let (_, v) = json(&["explore", "abba", "--fixed", "--preemptions", "1", "--json"]);
    assert_eq!((v["preemption_bound"].as_u64(), v.get("preemptions")), (Some(1), None), "{v}");
}

#[test]
fn shrink_says_when_it_did_not_shrink_and_keeps_its_best_on_ctrl_c() {
    // One try: the run is only replayed, so it is not shrunk, and the JSON says so.
    let (code, v) = json(&["shrink", "ttrpc", "--client", "v1.2.3", "--seed", "7", "--max-tries", "1", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(
        (&v["shrunk"], &v["interrupted"], &v["budget_spent"]),
        (&json!(false), &json!(false), &json!(true)),
        "{v}"
    );
    assert_eq!(v["preemptions"], v["original"]["preemptions"], "{v}");
    let (_, v) = json(&["shrink", "philosophers", "--seed", "0", "--json"]);
    assert_eq!(v["shrunk"], json!(true), "{v}");
    // Ctrl-C: the smallest schedule found so far, replayable, and exit 1 (a failure found).
    let (code, stdout) = interrupted_after_half_a_second(&[
        "shrink",
        "ttrpc",
        "--client",
        "v1.2.3",
        "--seed",
        "7",
        "--max-tries",
        "100000000",
    ]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("interrupted after"), "{stdout}");
    let schedule = stdout.split_whitespace().find(|w| w.starts_with("ds1:ttrpc:")).expect("a schedule string");
    let (code, v) = json(&["replay", "ttrpc", "--client", "v1.2.3", "--schedule", schedule, "--json"]);
    assert_eq!((code, v["verdict"].as_str()), (1, Some("deadlock")), "{v}");
}

#[test]
fn a_png_of_names_the_font_lacks_says_so_in_one_note() {
    let dir = Scratch::new("cli-glyphs");
    let committed = ABBA_TRACE;
    let mut t = abba_trace_json();
    t["tasks"][1]["name"] = json!("写线程-1");
    for b in t["deadlock"]["cycle"].as_array_mut().unwrap() {
        if b["task"] == 1 {
            b["name"] = json!("写线程-1");
        }
        // The report names it where it can release another, too.
        for r in b["released_by"].as_array_mut().unwrap() {
            if r == "T1" {
                *r = json!("写线程-1");
            }
        }
    }
    let trace = dir.join("cjk.json");
    std::fs::write(&trace, serde_json::to_string(&t).unwrap()).unwrap();
    let trace = trace.to_str().unwrap();
    let png = dir.join("cjk.png");
    let (code, _, err) = deadsim(&["render", trace, "-o", png.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // (Renamed, the trace is not what its schedule replays to: a note of its own.)
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note:") && !l.contains("makes another run")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("no glyph for \"写线程\" in task \"写线程-1\""), "{err}");
    // An SVG leaves the characters to the viewer's fonts: nothing to say.
    let svg = dir.join("cjk.svg");
    let (code, _, err) = deadsim(&["render", trace, "-o", svg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("no glyph"), "{err}");
    // A trace the font covers gets no note.
    let (code, _, err) = deadsim(&["render", committed, "-o", png.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note:"), "{err}");
}

#[test]
fn replay_prints_the_lock_order_findings_its_json_gives() {
    let (code, out, _) = deadsim(&["replay", "abba", "--seed", "0"]);
    assert_eq!(code, 1);
    let (_, v) = json(&["replay", "abba", "--seed", "0", "--json"]);
    let n = v["warnings"].as_array().unwrap().len();
    assert!(n > 0, "{v}");
    assert!(out.contains(&format!("Lock order ({n} finding")), "{out}");
    let (_, run_out, _) = deadsim(&["run", "abba", "--seed", "0"]);
    let tail = |s: &str| s[s.find("\nLock order").unwrap()..].to_string();
    assert_eq!(tail(&out), tail(&run_out), "replay and run give the same findings");
    // shrink too, of the run it shows, shrunk or not.
    for (args, findings) in [
        (vec!["shrink", "ttrpc", "--client", "v1.2.3", "--seed", "7"], 2),
        // Nothing to shrink: the findings of the passing run.
        (vec!["shrink", "ttrpc", "--client", "v1.2.4", "--server", "v1.2.4", "--seed", "0"], 1),
        (vec!["shrink", "abba", "--fixed", "--seed", "0"], 0),
    ] {
        let (_, out, _) = deadsim(&args);
        let (_, v) = json(&[&args[..], &["--json"]].concat());
        assert_eq!(v["warnings"].as_array().unwrap().len(), findings, "{v}");
        assert_eq!(out.contains(&format!("\nLock order ({findings} finding")), findings > 0, "{args:?}: {out}");
        let mut replay = vec!["replay"];
        replay.extend(&args[1..args.len() - 2]);
        replay.extend(["--schedule", v["schedule"].as_str().unwrap()]);
        let (_, replayed, _) = deadsim(&replay);
        if findings > 0 {
            assert_eq!(tail(&out), tail(&replayed), "{args:?}: shrink's findings are its run's");
        }
    }
}

#[test]
fn shrink_tries_keep_to_the_step_limit_given() {
    // The report ends with what the search showed; the run's lock-order findings follow it.
    let report = |out: &str| out.split("\nLock order (").next().unwrap().trim_end().to_string();
    let (code, out, err) = deadsim(&["shrink", "abba", "--seed", "3", "--max-steps", "13"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("\n\nLock order (1 finding"), "{out}");
    // Some schedules with fewer preemptions run past 13 steps: the proof says it stops there.
    assert!(
        report(&out).ends_with(
            "No schedule with fewer preemptions fails this way within 13 steps (some of the schedules tried ran \
             that long and were cut there): every one was tried."
        ),
        "{out}"
    );
    // Without the flag no schedule runs into the limit, so none is named.
    let (_, out, _) = deadsim(&["shrink", "abba", "--seed", "3"]);
    assert!(report(&out).ends_with("No schedule with fewer preemptions fails this way: every one was tried."), "{out}");
}

#[test]
fn the_readmes_abba_is_the_built_in_one() {
    // Each function of the README's example is the one in
    // sim/src/models/abba.rs line for line (comments aside; the file says
    // `crate::` where the README says `sim::`).
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let source = std::fs::read_to_string(format!("{root}/sim/src/models/abba.rs")).unwrap().replace("crate::", "sim::");
    let start = readme.find("This is the built-in `abba`").expect("the README shows abba");
    let block = &readme[start..];
    let block = &block[block.find("```rust\n").unwrap() + 8..];
    let block = &block[..block.find("```").unwrap()];
    // Each `pub async fn`, from its line to its closing brace, without comments.
    let functions = |text: &str| -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        let mut inside = false;
        for line in text.lines() {
            inside |= line.starts_with("pub async fn ");
            if inside {
                let code = line.split("//").next().unwrap().trim_end().to_string();
                if out.last().is_none_or(|f| f.last().is_some_and(|l| l == "}")) {
                    out.push(Vec::new());
                }
                out.last_mut().unwrap().push(code);
                inside = line != "}";
            }
        }
        out
    };
    let (shown, real) = (functions(block), functions(&source));
    assert_eq!(shown.len(), 2, "worker and main: {shown:?}");
    assert_eq!(shown, real);
}

#[test]
fn a_settled_lowest_failure_is_not_stopped_early_alone_or_merged() {
    // Shard 0 fails at its first seed; shard 1 runs out of time with no
    // failure. Every seed below the lowest failure ran: the merge is what one
    // hunt of the range prints, however the time budget fell.
    let dir = Scratch::new("cli-settled");
    let base = ["hunt", "philosophers", "--philosophers", "8", "--rounds", "1", "--seeds", "36..1036", "--jobs", "1"];
    let (code, whole) = json(&[&base[..], &["--json"]].concat());
    assert_eq!((code, whole["seed"].as_u64()), (1, Some(36)), "{whole}");
    let mut files = Vec::new();
    for i in 0..2 {
        let shard = format!("{i}/2");
        let args = [&base[..], &["--shard", &shard, "--time-budget", "0.0000001", "--json"]].concat();
        let (_, out, err) = deadsim(&args);
        let f = dir.join(format!("s{i}.json"));
        std::fs::write(&f, out).unwrap();
        files.push(f.to_str().unwrap().to_string());
        if i == 0 {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            let got = (&v["seed"], &v["stopped_early"], &v["stopped"], &v["covered"]);
            assert_eq!(got, (&json!(36), &json!(false), &json!(null), &json!("36..=535")), "{err}");
        }
    }
    let (code, out, err) = deadsim(&["merge", &files[0], &files[1]]);
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("warning"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for field in ["seed", "schedules", "stopped_early", "stopped", "covered", "complete", "cycle"] {
        assert_eq!(v[field], whole[field], "{field}: {v}");
    }
    assert_eq!(v["lowest"], json!(true), "{v}");
}

#[test]
fn merge_names_what_the_shards_covered_with_meeting_ranges_joined() {
    let dir = Scratch::new("cli-covered");
    let mut files = Vec::new();
    for (i, budget) in [(0, Some("0.000000001")), (1, None), (2, None)] {
        let shard = format!("{i}/3");
        let mut args = vec!["hunt", "abba", "--fixed", "--seeds", "0..6000", "--shard", &shard, "--json"];
        // Shard 0 stops at once: the first 16 seeds always run.
        if let Some(b) = budget {
            args.extend(["--time-budget", b]);
        }
        let (code, out, err) = deadsim(&args);
        assert_eq!(code, 0, "{err}");
        let f = dir.join(format!("s{i}.json"));
        std::fs::write(&f, out).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let (code, v) = json(&[&["merge"][..], &files.iter().map(String::as_str).collect::<Vec<_>>()].concat());
    assert_eq!(code, 0);
    assert_eq!((v["covered"].as_str(), v["schedules"].as_u64()), (Some("0..=15,2000..=5999"), Some(4016)), "{v}");
    // No failure: none to call the lowest.
    assert_eq!(v["lowest"], json!(null), "{v}");
}

#[test]
fn a_trace_that_cannot_be_written_fails_after_the_report_and_is_said_at_once() {
    // /dev/full takes no byte (Linux); the trace goes to it in place.
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    for args in [
        &["hunt", "abba", "--seeds", "0..10", "--trace", "/dev/full"][..],
        &["explore", "abba", "--trace", "/dev/full"][..],
        &["shrink", "abba", "--seed", "3", "--trace", "/dev/full"][..],
        &["shrink", "abba", "--seed", "3", "--max-steps", "5", "--trace", "/dev/full"][..],
    ] {
        let (code, out, err) = deadsim(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        // The result is there, the replay line with it.
        assert!(out.contains("deadsim replay abba"), "{args:?}: {out}");
        let said = "deadsim: error: --trace /dev/full: cannot write the trace (";
        assert!(
            err.lines().next().is_some_and(|l| l.starts_with(said) && l.ends_with("; the report follows")),
            "{err}"
        );
        // Said once: the exit code says the rest.
        assert_eq!(err.matches("deadsim: error").count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn an_error_naming_text_from_a_file_stays_one_line_without_its_control_characters() {
    // A task's name with a line break and an escape sequence (red text),
    // which the trace's own cycle then contradicts: the error quotes the
    // name, escaped, on one line.
    let dir = Scratch::new("cli-control");
    let committed = ABBA_TRACE;
    let mut t = abba_trace_json();
    t["tasks"][1]["name"] = json!("a\nb\u{1b}[31m");
    let file = dir.join("t.json");
    std::fs::write(&file, t.to_string()).unwrap();
    let out = dir.join("x.png");
    let (code, _, err) = deadsim(&["render", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.contains("a\\nb\\u{1b}[31m") && !err.contains('\u{1b}'), "{err:?}");
    assert!(!out.exists());
    // A flag's value too.
    let (code, _, err) = deadsim(&["render", committed, "--tasks", "\u{1b}[31m", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.lines().count() == 1 && !err.contains('\u{1b}'), "{err:?}");
    // A right-to-left override would turn the rest of the line around.
    t["tasks"][1]["name"] = json!("\u{202e}evil");
    std::fs::write(&file, t.to_string()).unwrap();
    let (code, _, err) = deadsim(&["render", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("\\u{202e}evil") && !err.contains('\u{202e}'), "{err:?}");
}

/// A file that does not start as a JSON object is refused from its first
/// bytes: /dev/zero was read until memory ran out.
#[cfg(unix)]
#[test]
fn an_endless_file_given_as_a_trace_is_refused_from_its_first_bytes() {
    let dir = Scratch::new("cli-endless");
    let png = dir.join("never.png");
    for args in [&["render", "/dev/zero", "-o", png.to_str().unwrap()][..], &["export", "/dev/zero", "--perfetto", "-"]]
    {
        let (code, out, err) = deadsim(args);
        assert_eq!((code, out.as_str()), (2, ""), "{err}");
        assert_eq!(err, "deadsim: error: /dev/zero: not JSON (expected value at line 1 column 1)\n");
    }
    assert!(!png.exists());
}

#[test]
fn a_trace_its_model_does_not_make_again_is_drawn_with_a_note_naming_the_first_difference() {
    // A built-in model's trace is made again, from its seed and strategy
    // or from its schedule string: the committed ones come out the same;
    // an edited one (a call site moved to another line, a seed changed,
    // which nothing in the file can contradict) is drawn, with a note.
    let dir = Scratch::new("cli-replayed");
    let committed = ABBA_TRACE;
    let out = dir.join("x.png");
    let (code, _, err) = deadsim(&["render", committed, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note"), "{err}");
    // A trace written before reports kept `released_by_ids`, or the frame
    // of each held lock, is the same run.
    let mut old = abba_trace_json();
    for b in old["deadlock"]["cycle"].as_array_mut().unwrap() {
        b.as_object_mut().unwrap().remove("released_by_ids").unwrap();
        for h in b["holds"].as_array_mut().unwrap() {
            h.as_object_mut().unwrap().remove("frame").unwrap();
        }
    }
    let file = dir.join("old.json");
    std::fs::write(&file, old.to_string()).unwrap();
    let (code, _, err) = deadsim(&["render", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note"), "{err}");
    let mut t = abba_trace_json();
    let site = t["frames"][0]["site"].as_str().unwrap().to_string();
    t["frames"][0]["site"] = json!(format!("{site}0"));
    let file = dir.join("t.json");
    std::fs::write(&file, t.to_string()).unwrap();
    let (code, _, err) = deadsim(&["render", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let note = "seed 0 under strategy random makes another run with this deadsim's abba model, first at frames[0]";
    assert!(err.contains(note), "{err}");
    assert!(out.exists());
    let (code, _, err) = deadsim(&["export", file.to_str().unwrap(), "--perfetto", "-"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(note), "{err}");
    // Another seed in the title: its run does not deadlock.
    let mut seeded = t.clone();
    seeded["frames"][0]["site"] = json!(site);
    seeded["meta"]["seed"] = json!(5);
    std::fs::write(&file, seeded.to_string()).unwrap();
    let (code, _, err) = deadsim(&["render", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "seed 5 under strategy random makes another run with this deadsim's abba model, first at meta.verdict"
        ),
        "{err}"
    );
    // A PCT seed's run is made again as it was first made: its first run
    // (depth 1, the step bound) is not cut to the length of the second.
    for (model, strategy, seed) in [("abba", "pct:3", "4"), ("abba", "pct:10", "0"), ("ttrpc", "pct:5", "2")] {
        let pct = dir.join("pct.json");
        let (code, _, err) =
            deadsim(&["run", model, "--strategy", strategy, "--seed", seed, "--trace", pct.to_str().unwrap()]);
        assert!(code <= 1, "{err}");
        let (code, _, err) = deadsim(&["render", pct.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("note"), "{model} {strategy} seed {seed}: {err}");
    }
    // A shrunk run is made again from its schedule string.
    let shrunk = concat!(env!("CARGO_MANIFEST_DIR"), "/traces/ttrpc-s1.0.2-c1.2.3-deadlock-shrunk.json");
    let (code, _, err) = deadsim(&["render", shrunk, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note"), "{err}");
    // A schedule string whose head is right and whose choices are not.
    let replay = t["meta"]["replay"].as_str().unwrap().to_string();
    t["meta"]["replay"] = json!(format!("{}:x", &replay[..replay.rfind(':').unwrap()]));
    std::fs::write(&file, t.to_string()).unwrap();
    let (code, _, err) = deadsim(&["render", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("its schedule string (meta.replay) cannot be read"), "{err}");
    // A run named by its schedule whose schedule does not fit is said so,
    // not as a run that differs at meta.verdict.
    let head = &replay[..replay.rfind(':').unwrap()];
    let mut replayed = abba_trace_json();
    replayed["meta"]["strategy"] = json!("replay");
    for (choices, said) in [
        (
            "1x100",
            "its schedule string (meta.replay) goes on past the trace's 5 steps, with 95 of its 100 choices left",
        ),
        (
            "1.2",
            "its schedule string (meta.replay) does not replay with this deadsim's abba model: the schedule \
             diverges from the model at step 4: the schedule ends, but the run goes on",
        ),
    ] {
        replayed["meta"]["replay"] = json!(format!("{head}:{choices}"));
        std::fs::write(&file, replayed.to_string()).unwrap();
        let (code, _, err) = deadsim(&["render", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains(said) && !err.contains("meta.verdict"), "{choices}: {err}");
    }
}

#[test]
fn a_trace_named_as_one_of_the_charts_is_refused_and_every_file_left_as_it_was() {
    let dir = Scratch::new("trace-is-chart");
    let figs = format!("{}/", dir.display());
    let (code, _, err) = deadsim(&["run", "abba", "--render", &figs]);
    assert_eq!(code, 1, "{err}");
    let locks = dir.join("abba-a5167e82-seed0-locks.png");
    let read_all = || {
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files.into_iter().map(|p| (p.clone(), std::fs::read(p).unwrap())).collect::<Vec<_>>()
    };
    let before = read_all();
    // By its name, and through a link to another chart.
    #[cfg(unix)]
    std::os::unix::fs::symlink("abba-a5167e82-seed0-timeline.png", dir.join("link.json")).unwrap();
    let before_link = read_all();
    // By its name: a chart's extension, refused before the run.
    let (code, out, err) = deadsim(&["run", "abba", "--trace", locks.to_str().unwrap(), "--render", &figs]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains(".png is a chart's name, and this output is JSON"), "{err}");
    for (trace, chart) in [(dir.join("link.json"), "seed0-timeline.png")] {
        if !trace.exists() {
            continue; // no links here
        }
        let (code, out, err) = deadsim(&["run", "abba", "--trace", trace.to_str().unwrap(), "--render", &figs]);
        assert_eq!(code, 2, "{err}");
        assert!(out.starts_with("abba seed 0: deadlock"), "the report follows: {out}");
        assert!(err.contains("the same file as the chart") && err.contains(chart), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    assert!(before.len() == 3 && read_all() == before_link, "a file changed");
    // Charts not made yet, the trace's name spelt another way: refused
    // before anything is written.
    let fresh = dir.join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    let other = dir.join("fresh/../fresh/abba-a5167e82-seed0-locks.png");
    let (code, _, err) =
        deadsim(&["run", "abba", "--trace", other.to_str().unwrap(), "--render", &format!("{}/", fresh.display())]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".png is a chart's name"), "{err}");
    assert_eq!(std::fs::read_dir(&fresh).unwrap().count(), 0, "a file was written");
}

#[test]
fn shrink_says_when_its_budget_ends_before_the_search_of_fewer_preemptions() {
    let (code, out, _) = deadsim(&["shrink", "philosophers", "--seed", "0", "--max-tries", "3"]);
    assert_eq!(code, 1);
    assert!(
        out.contains(
            "ran out while it tried to shorten the run greedily, before the search of the schedules with fewer \
             than 4 preemptions began"
        ),
        "{out}"
    );
    let (_, v) = json(&["shrink", "philosophers", "--seed", "0", "--max-tries", "3", "--json"]);
    assert_eq!(v["fewest_preemptions_at_least"], 0, "{v}");
    assert_eq!((v["step_limit_hit"].as_bool(), v["nondeterminism"].is_null()), (Some(false), true), "{v}");
}

#[test]
fn merge_makes_every_claimed_failure_again_not_only_the_lowest() {
    let dir = Scratch::new("merge-claims");
    let shard = |extra: &[&str], i: u32, name: &str| -> (std::path::PathBuf, serde_json::Value) {
        let s = format!("{i}/2");
        let (_, out, _) =
            deadsim(&[&["hunt", "abba", "--seeds", "0..99", "--shard", &s, "--json"][..], extra].concat());
        let f = dir.join(name);
        std::fs::write(&f, &out).unwrap();
        (f, serde_json::from_str(&out).unwrap())
    };
    let write = |name: &str, v: &serde_json::Value| {
        let f = dir.join(name);
        std::fs::write(&f, v.to_string()).unwrap();
        f.to_str().unwrap().to_string()
    };
    // Both shards fail (seeds 0 and 49): the second's message, edited, is
    // refused although the merged result takes the first's.
    let (a0, _) = shard(&[], 0, "a0.json");
    let (a1, mut v) = shard(&[], 1, "a1.json");
    let (code, _, err) = deadsim(&["merge", a0.to_str().unwrap(), a1.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(v["seed"].as_u64() > Some(0), "{v}");
    v["message"] = json!("deadlock: made up");
    let (code, _, err) = deadsim(&["merge", a0.to_str().unwrap(), &write("a1b.json", &v)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a1b.json: field `message`") && err.contains("gives"), "{err}");
    // --keep-going: a distinct failure's signature, edited.
    let (k0, _) = shard(&["--keep-going"], 0, "k0.json");
    let (_, mut v) = shard(&["--keep-going"], 1, "k1.json");
    v["distinct"][0]["signature"] = json!("deadlock: T2 lock A -> T1 lock B");
    let (code, _, err) = deadsim(&["merge", k0.to_str().unwrap(), &write("k1b.json", &v)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("k1b.json: field `distinct[0]` says seed"), "{err}");
}

#[test]
fn a_failure_beyond_the_bound_is_reported_as_beyond_it() {
    // Eight philosophers: the search without a bound beside the passes finds
    // the deadlock with 7 preemptions; the budget runs out before the passes
    // cover the 1 asked for. A deadlock was seen, so it is reported (exit
    // 1), as having more preemptions than asked for, not as one the passes
    // might yet show to need fewer.
    let args = ["explore", "philosophers", "--philosophers", "8", "--rounds", "1", "--preemptions", "1"];
    let budget = ["--max-executions", "150000"];
    let (code, v) = json(&[&args[..], &budget, &["--json"]].concat());
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["verdict"], "deadlock", "{v}");
    let p = v["unbounded_failure"].as_u64().expect("found beside the passes");
    assert!(p > 1, "{v}");
    assert_eq!(
        (v["complete"].as_bool(), v["found_within"].as_u64(), v["proved_within"].as_u64()),
        (Some(false), None, Some(0)),
        "{v}"
    );
    let (code, stdout, _) = deadsim(&[&args[..], &budget].concat());
    assert_eq!(code, 1);
    let want = format!("has {p} preemptions, more than the 1 asked for, and the budget (--max-executions 150000) ran out before the passes covered 1");
    assert!(stdout.contains(&want), "{stdout}");
}

#[test]
fn render_takes_a_title_lanes_and_a_scale_and_refuses_what_does_not_fit() {
    let dir = Scratch::new("cli-figure");
    let trace = dir.join("abba.json");
    let t = trace.to_str().unwrap();
    assert_eq!(deadsim(&["run", "abba", "--trace", t]).0, 1);

    let png = dir.join("fig.png");
    let p = png.to_str().unwrap();
    let (code, _, err) =
        deadsim(&["render", t, "-o", p, "--scale", "2", "--title", "Figure 1: AB/BA", "--tasks", "T2,T1"]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&png).unwrap();
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    assert_eq!(width, 2400, "twice the default 1200");
    let svg = dir.join("fig.svg");
    let (code, _, err) =
        deadsim(&["render", t, "-o", svg.to_str().unwrap(), "--title", "Figure 1: AB/BA", "--tasks", "T2"]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("Figure 1: AB/BA") && !text.contains("abba · seed 0"), "{text}");
    assert!(text.contains("1 of 3 tasks drawn, the ones selected"), "{text}");

    // Chart and axis names in any case, as --format takes PNG.
    let (code, _, err) = deadsim(&["render", t, "--chart", "TimeLine", "--x", "STEPS", "-o", svg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // A value echoed in an error is cut to a length a terminal shows.
    let long = dir.join("long.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    v["tasks"][1]["name"] = json!("x".repeat(100_000));
    std::fs::write(&long, v.to_string()).unwrap();
    let (code, _, err) = deadsim(&["render", long.to_str().unwrap(), "-o", p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.len() < 1_200 && err.contains(" characters left out) "), "{} bytes", err.len());
    assert_eq!(err.lines().count(), 1);

    // --colours-of: the fix's figure colours each thread as the bug's does
    // (by themselves they differ: the bug's cycle takes the first colours).
    let fixed = dir.join("fixed.json");
    assert_eq!(deadsim(&["run", "abba", "--fixed", "--trace", fixed.to_str().unwrap()]).0, 0);
    // A lane's colour: its name is drawn after its colour swatch.
    let fill_of = |svg: &str, name: &str| {
        let at = svg.find(&format!(">\n{name}\n</text>")).unwrap();
        let swatch = &svg[svg[..at].rfind("<rect ").unwrap()..];
        let fill = swatch.find("fill=\"#").unwrap();
        swatch[fill + 6..fill + 13].to_string()
    };
    let colours = |trace: &std::path::Path, extra: &[&str]| -> Vec<String> {
        let out = dir.join("c.svg");
        let mut args = vec!["render", trace.to_str().unwrap(), "-o", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (code, _, err) = deadsim(&args);
        assert_eq!(code, 0, "{err}");
        let svg = std::fs::read_to_string(&out).unwrap();
        ["main", "T1", "T2"].map(|name| fill_of(&svg, name)).into()
    };
    let bug = colours(&trace, &[]);
    assert_ne!(colours(&fixed, &[]), bug);
    assert_eq!(colours(&fixed, &["--colours-of", t]), bug);
    assert_eq!(colours(&fixed, &["--colors-of", t]), bug);
    // Every task matched, of the same model: nothing to say. A trace of
    // another model (given by mistake) is said, with what matched.
    let out = dir.join("c.svg");
    let (code, _, err) = deadsim(&["render", fixed.to_str().unwrap(), "-o", out.to_str().unwrap(), "--colours-of", t]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note:"), "{err}");
    let philosophers = dir.join("philosophers.json");
    assert_eq!(deadsim(&["run", "philosophers", "--ordered", "--trace", philosophers.to_str().unwrap()]).0, 0);
    let (code, _, err) = deadsim(&[
        "render",
        fixed.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--colours-of",
        philosophers.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let note = err.lines().find(|l| l.starts_with("note: --colours-of")).unwrap_or_else(|| panic!("{err}"));
    assert!(
        note.contains(" is a trace of philosophers, ")
            && note.contains(" of abba: 1 of 3 tasks matched by name; \"T1\", \"T2\" keep "),
        "{note}"
    );

    // --rename: the lanes show the names given; the trace's own are gone from them.
    let (code, _, err) =
        deadsim(&["render", t, "-o", out.to_str().unwrap(), "--rename", "T1=first", "--rename", "T*=other"]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains(">\nfirst\n</text>") && svg.contains(">\nother\n</text>"), "renamed lanes");
    assert!(!svg.contains(">\nT1\n</text>") && !svg.contains(">\nT2\n</text>"), "old lane names left");
    // The header's outcome says them too, task by task, though the second
    // rename is of a name the first made shared ("T2" both).
    let (code, _, err) =
        deadsim(&["render", t, "-o", out.to_str().unwrap(), "--rename", "T1=T2", "--rename", "T2 (task 2)=first"]);
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.contains(
            "&quot;T2&quot; waiting to lock &quot;B&quot; -&gt; &quot;first&quot; waiting to lock &quot;A&quot;"
        ),
        "renamed outcome"
    );
    // With --colours-of, a renamed fix takes the renamed bug's colours.
    let renamed = ["--rename", "T1=first", "--rename", "T2=second"];
    let (code, _, err) = deadsim(&[&["render", t, "-o", out.to_str().unwrap()][..], &renamed].concat());
    assert_eq!(code, 0, "{err}");
    let bug_svg = std::fs::read_to_string(&out).unwrap();
    let (code, _, err) = deadsim(
        &[&["render", fixed.to_str().unwrap(), "-o", out.to_str().unwrap(), "--colours-of", t][..], &renamed].concat(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note:"), "every task matched: {err}");
    let fix_svg = std::fs::read_to_string(&out).unwrap();
    for name in ["first", "second"] {
        assert_eq!(fill_of(&fix_svg, name), fill_of(&bug_svg, name), "{name}");
    }
    // Colours are matched by the names as read: two threads renamed to one
    // name keep their own colours (they are told apart by task ids, which
    // two traces do not share).
    let traces = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let (minimal, pipeline) =
        (traces.join("flink-1.13.1-minimal-deadlock.json"), traces.join("flink-1.13.1-pipeline-deadlock.json"));
    let draw = |extra: &[&str]| {
        let mut args = vec![
            "render",
            minimal.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--colours-of",
            pipeline.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = deadsim(&args);
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(&out).unwrap()
    };
    let plain = draw(&[]);
    let shared = draw(&["--rename", "Join*=thread", "--rename", "Channel*=thread"]);
    assert_eq!(fill_of(&shared, "thread (task 1)"), fill_of(&plain, "Join(xxxxxx) (34/256)#1"));
    assert_eq!(fill_of(&shared, "thread (task 2)"), fill_of(&plain, "Channel state writer Join(xxxxxx) (34/256)#1"));
    // A window reaching past the trace is drawn up to its end, and said.
    for (window, said) in [
        ("last:5000", Some("note: --window last:5000: the trace has 5 steps: all are drawn")),
        ("steps:2..=50", Some("note: --window steps:2..=50: the trace ends at step 5: the window is drawn up to it")),
        ("time:0..3us", Some("note: --window time:0..3us: the trace ends at 500 ns: the window is drawn up to it")),
        ("last:5", None),
        ("time:0..500", None),
        ("time:0..=500", None),
    ] {
        let (code, _, err) = deadsim(&["render", t, "-o", out.to_str().unwrap(), "--window", window]);
        assert_eq!(code, 0, "{err}");
        let note = err.lines().find(|l| l.starts_with("note:"));
        assert_eq!(note, said, "{window}: {err}");
    }
    // Wholly outside: refused, with no note that it would be drawn.
    let (code, _, err) = deadsim(&["render", t, "-o", out.to_str().unwrap(), "--window", "time:600..700"]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("note:") && err.contains("is empty or outside the trace"), "{err}");

    // --align-with: the bug's figure is drawn on the fix's axis (to the
    // fix's 2.7 µs, not to its own 500 ns), and says so.
    let svg_of = |args: &[&str]| {
        let (code, _, err) = deadsim(&[&["render"][..], args, &["-o", out.to_str().unwrap()]].concat());
        assert_eq!(code, 0, "{err}");
        std::fs::read_to_string(&out).unwrap()
    };
    let fix = fixed.to_str().unwrap();
    let (alone, aligned) = (svg_of(&[t]), svg_of(&[t, "--align-with", fix]));
    assert!(alone.contains(">\n500 ns\n</text>") && !alone.contains(">\n2.7 µs\n</text>"));
    assert!(aligned.contains(">\n2.7 µs\n</text>"), "the fix's end is not on the axis");
    assert!(aligned.contains(">\nall 5 steps; x axis shared with another trace\n</text>"));
    assert!(svg_of(&[fix, "--align-with", t]).contains(">\nall 27 steps; x axis shared with another trace\n</text>"));
    // The other trace is drawn with the same flags: a window it has no
    // room for is its error, named as such; nothing is written.
    std::fs::remove_file(&out).unwrap();
    let (code, _, err) = deadsim(&["render", t, "--align-with", fix, "--window", "cycle", "-o", out.to_str().unwrap()]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.starts_with(&format!("deadsim: error: --align-with {fix}: window cycle: ")), "{err}");
    assert!(!out.exists());
    let (code, _, err) = deadsim(&["render", t, "--align-with", "no-such.json", "-o", out.to_str().unwrap()]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.starts_with("deadsim: error: --align-with no-such.json: "), "{err}");
    // Axes that cannot be shared (a run whose clock never moves is drawn
    // over steps) are the flag's error.
    let mut still = abba_trace_json();
    for e in still["events"].as_array_mut().unwrap() {
        e["time"] = json!(0);
    }
    still["meta"]["time_ns"] = json!(0);
    still["deadlock"]["time"] = json!(0);
    let still_file = dir.join("still.json");
    std::fs::write(&still_file, still.to_string()).unwrap();
    let still_path = still_file.to_str().unwrap();
    let (code, _, err) = deadsim(&["render", still_path, "--align-with", fix, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let said = format!("deadsim: error: --align-with {fix}: {still_path}: the charts cannot share an axis: ");
    assert!(err.lines().any(|l| l.starts_with(&said) && l.ends_with("draw both with --x steps")), "{err}");
    // The traces read are not written over.
    let partner = dir.join("partner.json");
    std::fs::copy(&fixed, &partner).unwrap();
    let pp = partner.to_str().unwrap();
    for flag in ["--align-with", "--colours-of"] {
        let (code, _, err) = deadsim(&["render", t, "--format", "png", "-o", pp, flag, pp]);
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(err.contains("this is the input trace"), "{err}");
    }
    assert_eq!(std::fs::read(&partner).unwrap(), std::fs::read(&fixed).unwrap());
    // A pair is drawn with the same flags: --tasks and --rename may name a
    // task only the other trace has (here the fix's T2, renamed `worker`).
    let mut renamed = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&fixed).unwrap()).unwrap();
    renamed["tasks"][2]["name"] = json!("worker");
    std::fs::write(&partner, renamed.to_string()).unwrap();
    for extra in [&["--tasks", "T1,worker"][..], &["--rename", "worker=second"]] {
        for (drawn, other) in [(t, pp), (pp, t)] {
            let mut args = vec!["render", drawn, "--align-with", other, "-o", out.to_str().unwrap()];
            args.extend_from_slice(extra);
            let (code, _, err) = deadsim(&args);
            assert_eq!(code, 0, "{args:?}: {err}");
        }
    }
    // A name neither has is refused, as without --align-with.
    let (code, _, err) =
        deadsim(&["render", t, "--align-with", pp, "--tasks", "T1,nosuch", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--tasks T1,nosuch: neither trace has a task named `nosuch`: "), "{err}");
    // A chain of renames, and a --tasks name of one trace only, draw the
    // pair alike whichever is drawn: the plots begin at one x.
    let traces = [("p2.json", vec!["--philosophers", "2"]), ("p3.json", vec!["--philosophers", "3", "--ordered"])];
    for (name, flags) in &traces {
        let path = dir.join(name);
        let mut args = vec!["run", "philosophers", "--trace", path.to_str().unwrap()];
        args.extend(flags);
        assert!(deadsim(&args).0 <= 1);
    }
    let (p2, p3) = (dir.join("p2.json"), dir.join("p3.json"));
    let (p2, p3) = (p2.to_str().unwrap(), p3.to_str().unwrap());
    let plot_left = |svg: &str| {
        let at = svg.find(">\nvirtual time\n</text>").unwrap();
        let tag = &svg[svg[..at].rfind("<text ").unwrap()..at];
        let x = tag.find(" x=\"").unwrap() + 4;
        tag[x..x + tag[x..].find('"').unwrap()].parse::<f64>().unwrap()
    };
    let pair = ["--rename", "philosopher-2=far", "--rename", "far=the one at the far end", "--window", "all"];
    let tasks = ["--tasks", "philosopher-0,the one at the far end"];
    for extra in [&pair[..], &[&pair[..], &tasks[..]].concat()] {
        let lefts: Vec<f64> = [(p2, p3), (p3, p2)]
            .iter()
            .map(|(drawn, other)| {
                let mut args = vec!["render", drawn, "--align-with", other, "--format", "svg", "-o"];
                args.push(out.to_str().unwrap());
                args.extend_from_slice(extra);
                let (code, _, err) = deadsim(&args);
                assert_eq!(code, 0, "{args:?}: {err}");
                plot_left(&std::fs::read_to_string(&out).unwrap())
            })
            .collect();
        assert_eq!(lefts[0], lefts[1], "{extra:?}");
    }
    let (code, _, err) =
        deadsim(&["render", p2, "--align-with", p3, "--tasks", "philosopher-2,nosuch", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("neither trace has a task named `nosuch`: "), "{err}");
    assert!(err.contains("p2.json (the trace has main, philosopher-0, philosopher-1); --align-with "), "{err}");
    assert!(err.contains("p3.json (the trace has main, philosopher-0, philosopher-1, philosopher-2)"), "{err}");
    // Two windows that begin apart are said; the wait-for graph takes no axis.
    let (code, _, err) =
        deadsim(&["render", fix, "--align-with", t, "--window", "last:3", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(": the two windows begin at different times: "), "{err}");
    let (code, _, err) =
        deadsim(&["render", t, "--align-with", fix, "--chart", "waitfor", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("note: --align-with does not apply to the wait-for graph"), "{err}");

    std::fs::remove_file(&png).unwrap();
    for (args, why) in [
        (&["--scale", "0"][..], "--scale 0: expected 1..=4"),
        (&["--scale", "x"], "--scale x: expected 1..=4"),
        (
            &["--scale", "3", "--width", "3000"],
            "--scale 3: at --width 3000 the PNG would be 9000 pixels wide, more than 8000",
        ),
        (&["--scale", "2", "--format", "svg"], "--scale 2: scales a PNG; an SVG is drawn at any size"),
        (&["--title", ""], "--title: empty"),
        (&["--header", "tiny"], "--header tiny: unknown header `tiny` (expected full, title or none)"),
        (&["--header", "none", "--title", "T"], "--title: --header none draws no title"),
        (&["--rename", "T1"], "--rename T1: expected PATTERN=NAME"),
        (&["--rename", "T1="], "--rename T1=: an empty name"),
        (&["--rename", "T3=x"], "--rename T3=x: "),
        (&["--rename", "T1=a,b"], "--rename T1=a,b: a comma in the name"),
        (&["--title", "\u{200b} \u{feff}"], "--title: empty (nothing visible)"),
        (&["--title", "\u{200e}\u{ad}\u{34f}\u{2061}"], "--title: empty (nothing visible)"),
        (&["--title", "two\nlines"], "--title: a line break"),
        (&["--title", "bell\u{7}"], "--title: a control character (U+0007); the title is plain text"),
        (&["--tasks", "T1,T2", "--window", "steps:1..=1"], "--tasks T1,T2: "),
        (&["--tasks", "T1,"], "--tasks T1,: an empty name"),
        (&["--tasks", "T3"], "no task is named `T3` (the trace has main, T1, T2)"),
        (&["--tasks", "T1", "--chart", "locks"], "--tasks: selects the timeline's lanes; --chart locks has none"),
        (&["--colours-of", "no-such.json"], "--colours-of no-such.json: cannot read"),
    ] {
        let svg = dir.join("x.svg");
        let out = if args.contains(&"svg") { svg.to_str().unwrap() } else { p };
        let mut all = vec!["render", t, "-o", out];
        all.extend_from_slice(args);
        let (code, out, err) = deadsim(&all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty() && err.trim_end().lines().count() == 1 && err.contains(why), "{args:?}: {err}");
        assert!(!png.exists() && !svg.exists(), "{args:?} left a picture");
    }
}

#[test]
fn a_step_limit_says_what_the_limit_may_mean_and_under_pct_or_explore_that_they_are_unfair() {
    let hint = "(--max-steps 5: a run that only takes long needs a larger one; one that never ends is a livelock)";
    let pct = "PCT runs the highest-priority task whenever it can";
    let dfs = "An exhaustive search tries unfair schedules too";
    for (args, note) in [
        (&["run", "abba", "--fixed", "--max-steps", "5"][..], None),
        (&["run", "abba", "--fixed", "--max-steps", "5", "--strategy", "pct"], Some(pct)),
        // In any case, as chart names.
        (&["hunt", "abba", "--fixed", "--max-steps", "5", "--strategy", "PCT:2", "--seeds", "0..3"], Some(pct)),
        (&["hunt", "abba", "--fixed", "--max-steps", "5", "--seeds", "0..3"], None),
        (&["explore", "abba", "--fixed", "--max-steps", "5"], Some(dfs)),
    ] {
        let (code, out, err) = deadsim(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(out.contains(hint), "{args:?}: {out}");
        for n in [pct, dfs] {
            assert_eq!(out.contains(n), note == Some(n), "{args:?}: {out}");
        }
    }
}

#[test]
fn run_replay_and_shrink_render_with_renders_window_axis_width_scale_and_title() {
    let dir = Scratch::new("cli-render-figure");
    let trace = dir.join("abba.json");
    let (code, _, err) = deadsim(&["run", "abba", "--seed", "0", "--trace", trace.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    let figure = ["--window", "steps:2..=5", "--x", "steps", "--width", "800", "--scale", "2", "--title", "AB/BA"];
    // What `render --chart all` draws from the trace with the same flags.
    let drawn = format!("{}/", dir.join("drawn").display());
    let mut render = vec!["render", trace.to_str().unwrap(), "--chart", "all", "-o", &drawn];
    render.extend(figure);
    let (code, _, err) = deadsim(&render);
    assert_eq!(code, 0, "{err}");
    let timeline = std::fs::read(format!("{drawn}abba-timeline.png")).unwrap();
    // A PNG's width is bytes 16..20 of its header: 800 at scale 2.
    assert_eq!(u32::from_be_bytes(timeline[16..20].try_into().unwrap()), 1600);
    for cmd in [&["run", "abba", "--seed", "0"][..], &["replay", "abba", "--seed", "0"]] {
        let figs = format!("{}/", dir.join(cmd[0]).display());
        let mut args = cmd.to_vec();
        args.extend(["--render", &figs]);
        args.extend(figure);
        let (code, _, err) = deadsim(&args);
        assert_eq!(code, 1, "{cmd:?}: {err}");
        for c in ["timeline", "locks"] {
            assert_eq!(
                std::fs::read(format!("{figs}abba-a5167e82-seed0-{c}.png")).unwrap(),
                std::fs::read(format!("{drawn}abba-{c}.png")).unwrap(),
                "{cmd:?} {c}"
            );
        }
    }
    // --format svg draws a folder's charts as SVG.
    let svgs = format!("{}/", dir.join("svg").display());
    let (code, _, err) = deadsim(&["run", "abba", "--render", &svgs, "--format", "svg"]);
    assert_eq!(code, 1, "{err}");
    for c in ["timeline", "locks", "waitfor"] {
        let svg = std::fs::read_to_string(format!("{svgs}abba-a5167e82-seed0-{c}.svg")).unwrap();
        assert!(svg.starts_with("<svg "), "{c}");
    }
    let figs = format!("{}/", dir.join("shrink").display());
    let (code, _, err) = deadsim(&["shrink", "abba", "--seed", "0", "--render", &figs, "--title", "Shrunk"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("shrink-") && err.contains("-timeline.png"), "{err}");
    // Checked before the run, with render's words; a window the run does
    // not reach fails after the report, with no chart written.
    for (args, why) in [
        (vec!["run", "abba", "--render", &figs, "--scale", "9"], "--scale 9: expected 1..=4"),
        (vec!["run", "abba", "--render", &figs, "--width", "5"], "--width 5: expected 600..=8000 pixels"),
        (vec!["replay", "abba", "--seed", "0", "--render", &figs, "--x", "space"], "--x space:"),
        (vec!["shrink", "abba", "--render", &figs, "--title", ""], "--title: empty"),
        (vec!["run", "abba", "--window", "all"], "--window: draws the run's charts; give --render OUT too"),
        (
            vec!["replay", "abba", "--seed", "0", "--title", "T"],
            "--title: draws the run's charts; give --render OUT too",
        ),
        // SVG charts, by the name: refused before the run, as render refuses it.
        (vec!["shrink", "abba", "--render", "fig.svg", "--scale", "2"], "--scale 2: scales a PNG"),
        // ... or by --format, which must agree with the name's extension.
        (vec!["run", "abba", "--render", &figs, "--format", "svg", "--scale", "2"], "--scale 2: scales a PNG"),
        (
            vec!["run", "abba", "--render", "fig.png", "--format", "svg"],
            "--render fig.png: the extension says png, --format says svg",
        ),
        (
            vec!["run", "abba", "--render", &figs, "--format", "jpg"],
            "--format jpg: unknown format `jpg` (expected png or svg)",
        ),
        (vec!["run", "abba", "--format", "svg"], "--format: draws the run's charts; give --render OUT too"),
    ] {
        let (code, out, err) = deadsim(&args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
    let late = format!("{}/", dir.join("late").display());
    let (code, out, err) = deadsim(&["run", "abba", "--render", &late, "--window", "steps:500..600"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.contains("Found a deadlock"), "the report still follows: {out}");
    assert!(err.contains("--window steps 500 to 599 is empty or outside the trace (steps 1 to 5)"), "{err}");
    assert!(!std::path::Path::new(&late).exists() || std::fs::read_dir(&late).unwrap().next().is_none());
    // With --trace, the trace is still written: the window is the flag's
    // fault, and the trace is what to choose another from.
    let kept = dir.join("kept.json");
    let (code, _, err) =
        deadsim(&["run", "abba", "--render", &late, "--window", "steps:50..=60", "--trace", kept.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no chart was drawn, and --trace ") && err.contains("kept.json was written"), "{err}");
    assert!(std::fs::read(&kept).unwrap() == std::fs::read(&trace).unwrap(), "the run's own trace");
}

#[test]
fn replay_lists_every_step_the_run_took() {
    // Every step from 1 to the last has a line: its events, or `runs` for
    // the task that ran without one (a task's first run, up to the
    // scheduling point before its first lock), at the step's time.
    for model in ["abba", "philosophers"] {
        let (code, out, err) = deadsim(&["replay", model, "--seed", "0"]);
        assert_eq!(code, 1, "{err}");
        let (_, json_out, _) = deadsim(&["replay", model, "--seed", "0", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&json_out).unwrap();
        let steps = v["steps"].as_u64().unwrap();
        let listed: std::collections::BTreeSet<u64> = out
            .lines()
            .filter_map(|l| l.strip_prefix("step "))
            .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(listed, (0..=steps).collect(), "{model}:\n{out}");
    }
    let (_, out, _) = deadsim(&["replay", "abba", "--seed", "0"]);
    assert!(out.contains("step      2 t=      200ns  T1                   runs\n"), "{out}");
}

#[test]
fn a_schedule_string_too_long_to_print_is_said_where_to_find() {
    // A run stopped at its step limit has a schedule string of about two
    // characters a step: megabytes at the default limit, printed whole.
    let args = [
        "hunt",
        "ttrpc",
        "--client",
        "v1.1.0",
        "--callers",
        "8",
        "--calls",
        "1",
        "--payload",
        "65536",
        "--pipe-buffer",
        "1",
        "--seeds",
        "0..1",
        "--max-steps",
        "100000",
    ];
    let (code, stdout, err) = deadsim(&args);
    assert_eq!(code, 1, "{err}");
    assert!(stdout.len() < 8000, "{} bytes", stdout.len());
    let replay = stdout.lines().find(|l| l.starts_with("replay: ")).expect("a replay line");
    assert!(
        replay.ends_with("not printed; --json gives it (`schedule`), as a --trace file does (meta.replay)>"),
        "{replay}"
    );
    assert!(stdout.contains("\n   or: deadsim replay ttrpc --client v1.1.0 "), "{stdout}");
    assert!(stdout.contains(" --seed 0 --max-steps 100000\n"), "{stdout}");
    // The JSON has it whole.
    let (_, v) = json(&[&args[..], &["--json"]].concat());
    let schedule = v["schedule"].as_str().unwrap();
    assert!(schedule.len() > 4000 && replay.contains(&format!("{} characters", schedule.chars().count())), "{replay}");
}

/// A report's first line names the code that ran, defaults included (a
/// v1.2.3 client deadlocks against the v1.0.2 server only), while the
/// commands it prints keep to the flags that differ from the defaults.
#[test]
fn a_reports_header_names_the_releases_its_replay_lines_only_what_was_given() {
    let (code, out, _) = deadsim(&["hunt", "ttrpc", "--client", "v1.2.3", "--seeds", "0..20"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("ttrpc --server v1.0.2 --client v1.2.3: deadlock at seed 7 "), "{out}");
    assert!(out.contains("\n   or: deadsim replay ttrpc --client v1.2.3 --seed 7"), "{out}");
    let (code, out, _) = deadsim(&["run", "flink", "--scenario", "minimal", "--fix", "self-assign", "--seed", "3"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("flink --flink-version 1.13.1 --fix self-assign --scenario minimal seed 3: "), "{out}");
    let (code, out, _) = deadsim(&["run", "abba", "--seed", "0"]);
    assert_eq!(code, 1);
    assert!(out.starts_with("abba seed 0: deadlock"), "{out}");
}

/// The JSON of a deadlock carries what its text report says of each task:
/// the whole stack and the locks held (cycle), and the tasks blocked
/// behind the cycle (`blocked`).
#[test]
fn a_deadlocks_json_has_each_tasks_stack_holds_and_the_tasks_behind() {
    let (code, v) = json(&["run", "ttrpc", "--client", "v1.2.3", "--seed", "7", "--json"]);
    assert_eq!(code, 1, "{v}");
    let cycle = v["cycle"].as_array().expect("a list");
    let caller = cycle.iter().find(|b| b["op"] == "lock").expect("the caller waiting for sendLock");
    assert_eq!(caller["waits_for"], "sendLock", "{v}");
    assert_eq!(
        caller["stack"],
        serde_json::json!([
            "Client.createStream (client.go:405)",
            "Client.dispatch (client.go:519)",
            "Client.Call (client.go:173)"
        ]),
        "{v}"
    );
    assert_eq!(caller["at"], caller["stack"][0]);
    assert_eq!(
        caller["holds"],
        serde_json::json!([{"resource": "streamLock", "kind": "rwmutex", "mode": "write", "at": "Client.createStream (client.go:389)", "frame": 0}]),
        "{v}"
    );
    let blocked = v["blocked"].as_array().expect("a list");
    assert!(blocked.iter().any(|b| b["task"] == "main" && b["op"] == "join"), "{v}");
    assert!(blocked.iter().all(|b| !cycle.iter().any(|c| c["id"] == b["id"])), "{v}");
    // The text report lists the same tasks behind the cycle.
    let (_, out, _) = deadsim(&["run", "ttrpc", "--client", "v1.2.3", "--seed", "7"]);
    let behind = out.split("Blocked behind the cycle:\n").nth(1).expect("the section");
    for b in blocked {
        assert!(
            behind.contains(&format!("\"{}\" (task {})", b["task"].as_str().unwrap(), b["id"])),
            "{b} not in {behind}"
        );
    }
}

/// A timeline whose `--tasks` leave out tasks of the deadlock cycle draws
/// no arrow to or from them, and says so: a figure of a deadlock with no
/// arrow at all is otherwise unexplained.
#[test]
fn a_timeline_without_some_of_the_cycles_tasks_says_their_arrows_are_not_drawn() {
    let dir = Scratch::new("cli-tasks-cycle");
    let out = dir.join("t.png");
    let (code, _, err) = deadsim(&["render", ABBA_TRACE, "--tasks", "T1", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let note = "note: --tasks leaves out 1 of the 2 tasks of the deadlock cycle (\"T2\"): no arrow goes to or from that task\n";
    // Said once the figure is drawn.
    assert!(err.ends_with(&format!("{note}wrote {}\n", out.display())), "{err}");
    let (code, _, err) = deadsim(&["render", ABBA_TRACE, "--tasks", "main", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "--tasks leaves out all 2 tasks of the deadlock cycle (\"T1\", \"T2\"): no arrow goes to or from those"
        ),
        "{err}"
    );
    // Every task of the cycle drawn: no note.
    let (code, _, err) = deadsim(&["render", ABBA_TRACE, "--tasks", "T*", "-o", out.to_str().unwrap()]);
    assert_eq!((code, err.contains("note")), (0, false), "{err}");
}
