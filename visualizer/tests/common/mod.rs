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
                let n = s2c.read(64, &mut got).await.unwrap();
                if n == 0 {
                    break;
                }
                let r = streams.rlock().await;
                sim::time::sleep(300).await;
                r.runlock().await;
            }
        });
    }
    {
        let (c2s, s2c, queue, work) = (c2s.clone(), s2c.clone(), queue.clone(), work.clone());
        sim::spawn("Server.run", async move {
            let _f = sim::frame("Server.run");
            c2s.declare_reader();
            s2c.declare_writer();
            work.declare_sender();
            let mut got = Vec::new();
            loop {
                let n = c2s.read(128, &mut got).await.unwrap();
                if n == 0 {
                    break;
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
        let (queue, work) = (queue.clone(), work.clone());
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
    sim::Sim::new(seed)
        .record(true)
        .label("pipes-test", vec![Param { name: "messages".into(), value: "40".into() }])
        .run(|| async { pipes_model() })
        .trace
        .unwrap()
}

/// The first seed whose `pipes_model` run deadlocks.
pub fn pipes_deadlock() -> Trace {
    (0..200).map(pipes_trace).find(|t| t.meta.verdict == "deadlock").expect("a seed deadlocks")
}
