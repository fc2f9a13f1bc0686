//! `deadsim bench`: throughput per model and strategy, schedules and time to
//! the first deadlock, and executions to exhaust the small models.

use std::time::Instant;

use sim::models::{self, Configured};
use sim::scheduler::{explore, ExploreConfig, StrategyKind};

use crate::output::{flags_label, print_table};

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Says on a terminal's stderr which row is being measured, over the last
/// one (an empty `what` clears it): a table is printed only when all its rows
/// are in, and the first takes half a minute. Quiet when stderr is not a
/// terminal, as a hunt's progress line is.
fn status(what: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprint!("\r{:78}\r{what}", "");
    }
}

fn configured(name: &str, p: &[(&str, &str)]) -> Configured {
    models::find(name).unwrap().configure(&pairs(p)).unwrap()
}

pub fn bench(seconds: f64) {
    println!("deadsim bench: recording off, one core, {} s per throughput row\n", crate::secs(seconds));
    let throughput: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("abba", vec![("fixed", "true")]),
        ("abba", vec![]),
        ("philosophers", vec![("ordered", "true")]),
        ("philosophers", vec![]),
        ("ttrpc", vec![("server", "v1.0.2"), ("client", "v1.2.3")]),
        ("ttrpc", vec![("server", "v1.2.3"), ("client", "v1.2.4")]),
        ("flink", vec![("flink-version", "1.13.1"), ("scenario", "pipeline")]),
        ("flink", vec![("flink-version", "1.13.2"), ("scenario", "pipeline")]),
    ];
    let mut table = vec![["model", "variant", "strategy", "schedules/s", "steps/s", "steps/run"].map(String::from)];
    for (name, params) in &throughput {
        let cfg = configured(name, params);
        for kind in [StrategyKind::Random, StrategyKind::Pct(3)] {
            status(&format!("measuring {name} {} {kind} ...", flags_label(&pairs(params))));
            // Warm up, then measure whole batches until the time is up.
            for seed in 0..200 {
                std::hint::black_box(kind.run(&cfg, seed, false, sim::DEFAULT_MAX_STEPS));
            }
            let started = Instant::now();
            let (mut runs, mut steps, mut seed) = (0u64, 0u64, 0u64);
            // At least one batch, however short the time.
            while runs == 0 || started.elapsed().as_secs_f64() < seconds {
                for _ in 0..200 {
                    let r = kind.run(&cfg, seed, false, sim::DEFAULT_MAX_STEPS);
                    steps += r.steps;
                    runs += 1;
                    seed += 1;
                }
            }
            let t = started.elapsed().as_secs_f64();
            table.push([
                name.to_string(),
                flags_label(&pairs(params)),
                kind.to_string(),
                format!("{:.0}", runs as f64 / t),
                format!("{:.0}", steps as f64 / t),
                format!("{:.1}", steps as f64 / runs as f64),
            ]);
        }
    }
    status("");
    print_table(&table, &[false, false, false, true, true, true]);
    println!(
        "(PCT runs each seed once to learn its step bound, then again with its change points unless \
         that first run failed: schedules/s counts seeds; steps/s and steps/run the steps of the run \
         each seed reports, the second, or the first if it failed.)"
    );

    // A row gives up after 100,000 seeds or this long, whichever comes first.
    let row_cap = seconds * 5.0;
    println!("\nFirst deadlock from seed 0, one job (up to 100,000 seeds or {} s a row):\n", crate::secs(row_cap));
    let buggy: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("abba", vec![]),
        ("philosophers", vec![]),
        ("ttrpc", vec![("server", "v1.0.2"), ("client", "v1.0.2")]),
        ("ttrpc", vec![("server", "v1.0.2"), ("client", "v1.2.3")]),
        ("flink", vec![("flink-version", "1.13.1"), ("scenario", "minimal")]),
        ("flink", vec![("flink-version", "1.13.1"), ("scenario", "pipeline")]),
    ];
    let mut table = vec![["model", "variant", "strategy", "schedules", "time"].map(String::from)];
    for (name, params) in &buggy {
        let cfg = configured(name, params);
        for kind in [StrategyKind::Random, StrategyKind::Pct(3)] {
            status(&format!("hunting {name} {} {kind} ...", flags_label(&pairs(params))));
            // Up to 100,000 seeds, and no longer than the row's time.
            let started = Instant::now();
            let (mut found, mut tried) = (None, 0u64);
            while tried < 100_000 && started.elapsed().as_secs_f64() < row_cap {
                if kind.run(&cfg, tried, false, sim::DEFAULT_MAX_STEPS).outcome.is_failure() {
                    found = Some(tried);
                    break;
                }
                tried += 1;
            }
            let t = started.elapsed().as_secs_f64();
            table.push([
                name.to_string(),
                flags_label(&pairs(params)),
                kind.to_string(),
                found.map_or(format!("none in {tried}"), |s| (s + 1).to_string()),
                format!("{:.2} ms", t * 1e3),
            ]);
        }
    }
    status("");
    print_table(&table, &[false, false, false, true, true]);

    println!("\nExecutions to explore every schedule (budget 100,000):\n");
    let small: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("abba", vec![("fixed", "true")]),
        ("philosophers", vec![("philosophers", "3"), ("ordered", "true"), ("rounds", "1")]),
        ("philosophers", vec![("philosophers", "4"), ("ordered", "true"), ("rounds", "1")]),
        ("flink", vec![("flink-version", "1.13.2"), ("scenario", "minimal")]),
    ];
    // Executions to exhaust (within `bound`), shown with "> " when the budget
    // ran out, and the time taken.
    let exhaust = |cfg: &Configured, reduction: bool, bound: Option<u32>| {
        let started = Instant::now();
        let r = explore(
            cfg,
            &ExploreConfig {
                reduction,
                preemption_bound: bound,
                max_executions: 100_000,
                // The search alone: its proof's random check is not what is measured.
                cross_check: false,
                // Otherwise as `deadsim explore` runs it (every model here is a fixed one).
                ..ExploreConfig::default()
            },
        );
        let shown = if r.exhausted { r.executions.to_string() } else { format!("> {}", r.executions) };
        (shown, format!("{:.2} ms", started.elapsed().as_secs_f64() * 1e3))
    };
    let mut table = vec![["model", "variant", "with reduction", "without", "time with"].map(String::from)];
    for (name, params) in &small {
        status(&format!("exploring {name} {} ...", flags_label(&pairs(params))));
        let cfg = configured(name, params);
        let ((with, t), (without, _)) = (exhaust(&cfg, true, None), exhaust(&cfg, false, None));
        table.push([name.to_string(), flags_label(&pairs(params)), with, without, t]);
    }
    status("");
    print_table(&table, &[false, false, true, true, true]);

    // Within a bound the reduction is bounded (no sleep sets, each bound a
    // pass of its own, the search without a bound beside them): what it
    // saves depends on how much work is independent.
    println!(
        "\nExecutions to explore every schedule within 2 preemptions (the bound raised from 0, \
         with reduction the search without a bound beside it; budget 100,000):\n"
    );
    let mut table =
        vec![["model", "variant", "with reduction", "without", "time with", "time without"].map(String::from)];
    for (name, params) in &small {
        status(&format!("exploring, bound 2: {name} {} ...", flags_label(&pairs(params))));
        let cfg = configured(name, params);
        let ((with, t), (without, t0)) = (exhaust(&cfg, true, Some(2)), exhaust(&cfg, false, Some(2)));
        table.push([name.to_string(), flags_label(&pairs(params)), with, without, t, t0]);
    }
    status("");
    print_table(&table, &[false, false, true, true, true, true]);
}
