//! Go's `time.Ticker`: ticks every period, drops a tick nobody took, and
//! after `Stop` sends no more (a receive then waits for good).

use sim::time::{now, sleep, Ticker};
use sim::{Outcome, Sim};

#[test]
fn ticks_come_every_period_and_one_not_taken_drops_the_next() {
    for seed in 0..20 {
        let run = Sim::new(seed).step_ns(0).run(|| async {
            let ticker = Ticker::new("ticker", 1_000);
            let c = ticker.c();
            assert_eq!((c.recv().await, now()), (Some(1_000), 1_000));
            assert_eq!(c.recv().await, Some(2_000));
            // Asleep for three and a half periods: the 3,000 tick waits in
            // the channel, those at 4,000 and 5,000 are dropped.
            sleep(3_500).await;
            assert_eq!(c.recv().await, Some(3_000));
            assert_eq!((c.recv().await, now()), (Some(6_000), 6_000));
            ticker.stop();
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_receive_after_stop_waits_for_good() {
    let run = Sim::new(0).step_ns(0).run(|| async {
        let ticker = Ticker::new("heartbeat", 1_000);
        ticker.c().recv().await;
        ticker.stop();
        ticker.c().recv().await; // Go: Stop does not close C
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    assert!(
        d.to_string().contains(
            "\"main\" (task 0): waiting to receive from chan \"heartbeat.C\", and no task left that may send on it \
             or close it"
        ),
        "{d}"
    );
    // Found at the stop, which ends the ticking task where it sleeps (Go
    // takes the timer off its heap), not at the next tick's time.
    assert_eq!(d.time, 1_000, "{d}");
}

#[test]
fn no_tick_is_sent_after_stop_returns() {
    // A stop that lands while a tick is due: the ticker once looked at the
    // flag, yielded, then sent (46 of 200 seeds sent one after stop).
    for seed in 0..200 {
        let run = Sim::new(seed).step_ns(0).run(|| async {
            let ticker = Ticker::new("t", 1_000);
            let t = ticker.clone();
            let stopper = sim::spawn("stopper", async move {
                sleep(1_000).await;
                t.stop();
                t.c().len()
            });
            let at_stop = stopper.join().await;
            sleep(10_000).await;
            sim::check(ticker.c().len() == at_stop, "a tick was sent after stop() returned");
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}
