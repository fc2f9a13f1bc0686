//! Property tests on generated inputs for everything deadsim reads: the seed
//! range parser, the schedule-string decoder and the trace reader. A fixed
//! number of cases and a fixed seed keep the suite deterministic.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use sim::hunt::SeedRange;
use sim::scheduler::Schedule;
use sim::trace::Trace;

fn runner(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(
        Config { cases, failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    )
}

#[test]
fn seed_ranges_parse_or_fail_cleanly_and_round_trip() {
    let mut r = runner(2_000);
    r.run(&".{0,30}", |s| {
        let _ = s.parse::<SeedRange>(); // never panics
        Ok(())
    })
    .unwrap();
    r.run(&(any::<u64>(), any::<u64>(), any::<bool>()), |(a, b, inclusive)| {
        let text = if inclusive { format!("{a}..={b}") } else { format!("{a}..{b}") };
        match text.parse::<SeedRange>() {
            Ok(range) => {
                prop_assert_eq!(range.first, a);
                prop_assert_eq!(range.last, if inclusive { b } else { b - 1 });
                prop_assert!(range.first <= range.last);
                prop_assert_eq!(range.to_string().parse::<SeedRange>().unwrap(), range);
            }
            Err(e) => {
                prop_assert!(if inclusive { b < a } else { b <= a }, "{text}: {e}");
                prop_assert!(e.contains("empty"), "{e}");
            }
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn schedule_strings_decode_or_fail_cleanly_and_round_trip() {
    let mut r = runner(2_000);
    r.run(&"ds1:[a-z]{0,6}:[0-9a-g]{0,9}:[0-9x.]{0,40}", |s| {
        let _ = Schedule::parse(&s); // never panics
        Ok(())
    })
    .unwrap();
    r.run(&".{0,60}", |s| {
        let _ = Schedule::parse(&s);
        Ok(())
    })
    .unwrap();
    r.run(&("[a-z]{1,8}", any::<u32>(), proptest::collection::vec(0u32..6, 0..200)), |(model, fp, choices)| {
        let s = Schedule { model, fingerprint: format!("{fp:08x}"), choices };
        let text = s.encode();
        prop_assert_eq!(Schedule::parse(&text).unwrap(), s);
        Ok(())
    })
    .unwrap();
}

#[test]
fn the_trace_reader_rejects_mutated_traces_without_panicking() {
    let good = sim::models::find("philosophers").unwrap().configure(&[]).unwrap().run(3, true).trace.unwrap().to_json();
    let mut r = runner(1_000);
    // Byte-level mutations: truncation, replaced bytes, inserted bytes.
    r.run(&(0..good.len(), any::<u8>(), 0u8..3), |(at, byte, how)| {
        let mut bytes = good.clone().into_bytes();
        match how {
            0 => bytes.truncate(at),
            1 => bytes[at] = byte,
            _ => bytes.insert(at, byte),
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        match Trace::parse(&text, "t.json") {
            Ok(t) => {
                // Whatever parses must write back and parse again.
                let again = Trace::parse(&t.to_json(), "t.json").unwrap();
                prop_assert_eq!(again, t);
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("t.json: ") && !msg.contains('\n'), "{msg}");
            }
        }
        Ok(())
    })
    .unwrap();
    // Structurally valid JSON with out-of-range ids.
    r.run(&(0usize..30, 0u64..1_000), |(i, v)| {
        let mut val: serde_json::Value = serde_json::from_str(&good).unwrap();
        let n = val["events"].as_array().unwrap().len();
        val["events"][i % n]["task"] = serde_json::json!(v);
        let text = val.to_string();
        let tasks = val["tasks"].as_array().unwrap().len() as u64;
        match Trace::parse(&text, "t.json") {
            // Out of range: refused, naming the field.
            _ if v >= tasks => {
                let msg = Trace::parse(&text, "t.json").unwrap_err().to_string();
                prop_assert!(msg.contains(&format!("events[{}].task: {v} is not a task id", i % n)), "{msg}");
            }
            // In range, the event may now be another task's where that task
            // cannot act (before its spawn, at another's step): loaded only if
            // the trace still tells one story, else refused in one line.
            Ok(t) => prop_assert_eq!(Trace::parse(&t.to_json(), "t.json").unwrap(), t),
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("t.json: ") && !msg.contains('\n'), "{msg}");
            }
        }
        Ok(())
    })
    .unwrap();
}
