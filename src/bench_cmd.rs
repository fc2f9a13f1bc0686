//! `deadsim bench`: schedules/s and steps/s of every built-in model.

use std::time::Instant;

use sim::models;

use crate::output::{flags_label, print_table};

pub fn bench(seconds: f64) {
    println!("deadsim bench: random strategy, recording off, one core, {seconds}s per row\n");
    let rows: Vec<(&str, Vec<(String, String)>)> = vec![
        ("abba", vec![("fixed".into(), "true".into())]),
        ("abba", vec![]),
        ("philosophers", vec![("ordered".into(), "true".into())]),
        ("philosophers", vec![]),
        ("ttrpc", vec![("server".into(), "v1.0.2".into()), ("client".into(), "v1.2.3".into())]),
        ("ttrpc", vec![("server".into(), "v1.2.3".into()), ("client".into(), "v1.2.4".into())]),
        ("flink", vec![("flink-version".into(), "1.13.1".into()), ("scenario".into(), "pipeline".into())]),
        ("flink", vec![("flink-version".into(), "1.13.2".into()), ("scenario".into(), "pipeline".into())]),
    ];
    let mut table = vec![["model", "variant", "schedules/s", "steps/s", "steps/run"].map(String::from)];
    for (name, params) in rows {
        let m = models::find(name).unwrap();
        let cfg = m.configure(&params).unwrap();
        // Warm up, then measure whole batches until the time is up.
        for seed in 0..1000 {
            std::hint::black_box(cfg.run(seed, false));
        }
        let started = Instant::now();
        let (mut runs, mut steps, mut seed) = (0u64, 0u64, 0u64);
        while started.elapsed().as_secs_f64() < seconds {
            for _ in 0..1000 {
                let r = cfg.run(seed, false);
                steps += r.steps;
                runs += 1;
                seed += 1;
            }
        }
        let t = started.elapsed().as_secs_f64();
        table.push([
            name.to_string(),
            flags_label(&params),
            format!("{:.0}", runs as f64 / t),
            format!("{:.0}", steps as f64 / t),
            format!("{:.1}", steps as f64 / runs as f64),
        ]);
    }
    print_table(&table, &[false, false, true, true, true]);
}
