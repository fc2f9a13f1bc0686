//! Traces for the visualizer tests, made by the engine from small models.
#![allow(dead_code)]

use sim::sync::{Chan, Monitor, Mutex, Pipe, RwMutex};
use sim::trace::{Param, Trace};

/// A ttrpc-like pipe deadlock: the client's sender holds `sendLock` while it
/// writes into a full pipe; the server writes responses into another full
/// pipe; the client's receiver waits for `streamLock`, held by
/// `createStream`, which waits for `sendLock`. Also uses a monitor, a
/// channel and sleeps so that every event kind the charts draw appears.
pub fn pipes_model() {
    let c2s: Pipe<u32> = Pipe::new("client->server", 256);
    let s2c: Pipe<u32> = Pipe::new("server->client", 256);
    let send_lock = Mutex::new("sendLock");
    let streams = RwMutex::new("streamLock");
    let queue = Monitor::new("bufferQueue");
    let work: Chan<u32> = Chan::new("work", 2);

    {
        let (c2s, send_lock, streams) = (c2s.clone(), send_lock, streams);
        sim::spawn("Client.send", async move {
            let _f = sim::frame("Client.send");
            c2s.declare_writer();
            for i in 0..40u32 {
                let g = send_lock.lock().await;
                let r = streams.rlock().await;
                r.runlock().await;
                c2s.write(96, Some(i)).await.unwrap();
                g.unlock().await;
            }
        });
    }
    {
        let (send_lock, streams) = (send_lock, streams);
        sim::spawn("Client.createStream", async move {
            let _f = sim::frame("Client.createStream");
            for _ in 0..40 {
                sim::time::sleep(700).await;
                let w = streams.lock().await;
                let s = send_lock.lock().await;
                s.unlock().await;
                w.unlock().await;
            }
        });
    }
    {
        let (s2c, streams) = (s2c.clone(), streams);
        sim::spawn("Client.recv", async move {
            let _f = sim::frame("Client.recv");
            s2c.declare_reader();
            let mut got = Vec::new();
            loop {
                match s2c.read(64, &mut got).await {
                    Ok(_) => {}
                    Err(sim::sync::ReadError::Eof) => break,
                    Err(e) => panic!("{e}"),
                }
                let r = streams.rlock().await;
                sim::time::sleep(300).await;
                r.runlock().await;
            }
        });
    }
    {
        let (c2s, s2c, work) = (c2s.clone(), s2c.clone(), work.clone());
        sim::spawn("Server.run", async move {
            let _f = sim::frame("Server.run");
            c2s.declare_reader();
            s2c.declare_writer();
            work.declare_sender();
            let mut got = Vec::new();
            loop {
                match c2s.read(128, &mut got).await {
                    Ok(_) => {}
                    Err(sim::sync::ReadError::Eof) => break,
                    Err(e) => panic!("{e}"),
                }
                let g = queue.enter().await;
                let g2 = queue.enter().await;
                g2.exit().await;
                g.exit().await;
                work.send(1).await;
                let _w = sim::frame("Server.reply");
                s2c.write(160, None).await.unwrap();
            }
        });
    }
    {
        let work = work.clone();
        sim::spawn_background("Server.worker", async move {
            let _f = sim::frame("Server.worker");
            work.declare_receiver();
            while work.recv().await.is_some() {
                let g = queue.enter().await;
                g.notify_all();
                g.exit().await;
            }
        });
    }
}

/// Runs `pipes_model` with `seed`, recording.
pub fn pipes_trace(seed: u64) -> Trace {
    *sim::Sim::new(seed)
        .record(true)
        .label("pipes-test", vec![Param { name: "messages".into(), value: "40".into() }])
        .run(|| async { pipes_model() })
        .trace
        .unwrap()
}

/// The first seed whose `pipes_model` run deadlocks.
pub fn pipes_deadlock() -> Trace {
    // The first deadlocking seed in which a pipe also filled up, so the pipe
    // chart has its "buffer full" moment to show.
    (0..2_000)
        .map(pipes_trace)
        .find(|t| {
            t.meta.verdict == "deadlock"
                && t.events.iter().any(|e| {
                    e.resource.is_some_and(|r| t.resources[r as usize].kind == "pipe")
                        && e.buffered.is_some()
                        && e.buffered == t.resources[e.resource.unwrap() as usize].capacity
                })
        })
        .expect("a seed deadlocks with a full pipe")
}

/// A long run that ends in a deadlock: four workers share three mutexes, an
/// RWMutex and a 4 KiB pipe for `rounds` rounds; then X and Y take A and B
/// in opposite orders, forced by two rendezvous channels, and deadlock.
/// About 12 events per round.
pub fn long_model(rounds: u64) {
    let m: Vec<Mutex> = ["m0", "m1", "m2"].into_iter().map(Mutex::new).collect();
    let rw = RwMutex::new("config");
    let pipe: Pipe<u32> = Pipe::new("log", 4096);
    let mut done = Vec::new();
    for (w, &lock) in m.iter().take(2).enumerate() {
        let pipe = pipe.clone();
        done.push(sim::spawn(format!("writer-{w}"), async move {
            let _f = sim::frame("Writer.loop");
            pipe.declare_writer();
            for _ in 0..rounds {
                let g = lock.lock().await;
                pipe.write(64, None).await.unwrap();
                g.unlock().await;
            }
        }));
    }
    {
        let pipe = pipe.clone();
        done.push(sim::spawn("reader", async move {
            let _f = sim::frame("Reader.loop");
            pipe.declare_reader();
            let mut got = Vec::new();
            let mut left = 2 * 64 * rounds;
            while left > 0 {
                let n = pipe.read(256, &mut got).await.unwrap();
                left -= n.min(left);
                let r = rw.rlock().await;
                r.runlock().await;
            }
        }));
    }
    {
        let m2 = m[2];
        done.push(sim::spawn("updater", async move {
            let _f = sim::frame("Updater.loop");
            for _ in 0..rounds / 2 {
                let w = rw.lock().await;
                let g = m2.lock().await;
                g.unlock().await;
                w.unlock().await;
            }
        }));
    }
    let (a, b) = (Mutex::new("A"), Mutex::new("B"));
    let go: Chan<()> = Chan::new("go", 0);
    let go2: Chan<()> = Chan::new("go2", 0);
    {
        let (go, go2) = (go.clone(), go2.clone());
        sim::spawn("X", async move {
            let _f = sim::frame("X.run");
            go.declare_sender();
            go2.declare_receiver();
            for h in done {
                h.join().await;
            }
            let ga = a.lock().await;
            go.send(()).await;
            go2.recv().await;
            let gb = b.lock().await;
            gb.unlock().await;
            ga.unlock().await;
        });
    }
    sim::spawn("Y", async move {
        let _f = sim::frame("Y.run");
        go.declare_receiver();
        go2.declare_sender();
        go.recv().await;
        let gb = b.lock().await;
        go2.send(()).await;
        let ga = a.lock().await;
        ga.unlock().await;
        gb.unlock().await;
    });
}

/// Records `long_model(rounds)` with seed 1.
pub fn long_trace(rounds: u64) -> Trace {
    *sim::Sim::new(1)
        .record(true)
        .max_steps(u64::MAX / 2)
        .label("long-test", vec![Param { name: "rounds".into(), value: rounds.to_string() }])
        .run(move || async move { long_model(rounds) })
        .trace
        .unwrap()
}

/// A long trace with at least `events` events, ending in the X/Y deadlock.
pub fn trace_with_events(events: usize) -> Trace {
    // About 13 events per round; measured, then topped up if short.
    let mut rounds = (events / 13).max(10) as u64;
    for _ in 0..5 {
        let t = long_trace(rounds);
        let d = t.deadlock.as_ref().expect("the long run ends in a deadlock");
        assert_eq!(d.cycle.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(), ["X", "Y"], "{}", t.meta.message);
        if t.events.len() >= events {
            return t;
        }
        rounds = rounds * events as u64 / t.events.len() as u64 + 10;
    }
    panic!("could not reach {events} events");
}

/// Clock jumps, as a Go handler waiting on a worker and a timer makes
/// them: `waiter` receives from `done`, which `timer` sends on after
/// sleeping 800 ns; `worker` sleeps 1000 ns, then waits on `never`. Each
/// time every task is blocked or asleep, the engine moves the clock to the
/// next sleeper's deadline and wakes it in the same step (a worker asleep
/// alone wakes in the step it fell asleep in). Ends in a deadlock.
pub fn clock_jump_trace() -> Trace {
    *sim::Sim::new(0)
        .record(true)
        .label("clock-jumps", vec![])
        .run(|| async {
            let done: Chan<u32> = Chan::new("done", 0);
            let never: Chan<u32> = Chan::new("never", 0);
            {
                let done = done.clone();
                sim::spawn("waiter", async move {
                    let _f = sim::frame("Server.handle");
                    done.declare_receiver();
                    done.recv().await;
                });
            }
            sim::spawn("timer", async move {
                let _f = sim::frame("time.After");
                done.declare_sender();
                sim::time::sleep(800).await;
                done.send(1).await;
            });
            sim::spawn("worker", async move {
                let _f = sim::frame("Server.handle.func1");
                never.declare_receiver();
                for ns in [500, 300, 200] {
                    sim::time::sleep(ns).await;
                }
                never.recv().await;
            });
        })
        .trace
        .unwrap()
}
