//! The ttrpc model: the verdict matrix of the design note (A.5), the exact
//! cycles and frames of the deadlocking cells, and the version mapping.

use sim::models::{self, Configured};

fn ttrpc(server: &str, client: &str, extra: &[(&str, &str)]) -> Configured {
    let mut p: Vec<(String, String)> = vec![("server".into(), server.into()), ("client".into(), client.into())];
    p.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    models::find("ttrpc").unwrap().configure(&p).unwrap()
}

fn first_failure(m: &Configured, seeds: std::ops::Range<u64>) -> Option<sim::Run> {
    seeds.map(|s| m.run(s, false)).find(|r| r.outcome.is_failure())
}

/// (task, op, waits_for) of the cycle, and the innermost frame of each.
fn cycle(run: &sim::Run) -> Vec<(String, String, String, String)> {
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("expected a deadlock: {}", run.outcome));
    d.cycle
        .iter()
        .map(|b| {
            let site = b.stack.iter().find(|f| !f.name.starts_with("bufio.") && f.name != "channel.send");
            (b.name.clone(), b.op.clone(), b.waits_for.clone(), site.map(|f| f.to_string()).unwrap_or_default())
        })
        .collect()
}

#[test]
fn server_v1_0_with_client_v1_0_deadlocks_as_in_issue_72() {
    for server in ["v1.0.2", "v1.1.0"] {
        let m = ttrpc(server, "v1.0.2", &[]);
        let run = first_failure(&m, 0..50).expect("deadlock within 50 seeds");
        let s = |x: &str| x.to_string();
        assert_eq!(
            cycle(&run),
            vec![
                // the server's main loop writing a response nobody reads
                (s("serverConn.run"), s("write"), s("server->client"), s("serverConn.run (server.go:459)")),
                // the client receiver holding a response, handing it to run
                (
                    s("receiver.run"),
                    s("select"),
                    s("send incoming | recv c.ctx.Done()"),
                    s("receiver.run (client.go:222)")
                ),
                // the client's run loop writing a request nobody reads
                (s("Client.run"), s("write"), s("client->server"), s("Client.send (client.go:324)")),
                // the server reader holding a request, handing it to the main loop
                (
                    s("serverConn.run.func1"),
                    s("select"),
                    s("send requests | recv done"),
                    s("serverConn.run.func1 (server.go:404)")
                ),
            ],
            "server {server}"
        );
        // The client's write is stuck where the report's stacks show it.
        let d = run.outcome.deadlock().unwrap();
        let frames: Vec<String> = d.cycle[2].stack.iter().map(|f| f.to_string()).collect();
        assert!(frames.contains(&"Client.run (client.go:273)".to_string()), "{frames:?}");
        assert!(frames.iter().any(|f| f.starts_with("channel.send (channel.go:1")), "{frames:?}");
    }
}

#[test]
fn server_v1_0_with_client_v1_2_3_deadlocks_through_stream_lock_and_send_lock() {
    for server in ["v1.0.2", "v1.1.0"] {
        let m = ttrpc(server, "v1.2.3", &[]);
        let run = first_failure(&m, 0..200).expect("deadlock within 200 seeds");
        let c = cycle(&run);
        let roles: Vec<(&str, &str, &str)> =
            c.iter().map(|(_, op, w, site)| (op.as_str(), w.as_str(), site.as_str())).collect();
        assert_eq!(
            roles,
            vec![
                ("write", "server->client", "serverConn.run (server.go:459)"),
                // the receive loop waiting for streamLock.RLock
                ("rlock", "streamLock", "Client.getStream (client.go:424)"),
                // a createStream holding streamLock, waiting for sendLock
                ("lock", "sendLock", "Client.createStream (client.go:405)"),
                // a createStream writing under sendLock
                ("write", "client->server", "Client.createStream (client.go:409)"),
                ("select", "send requests | recv done", "serverConn.run.func1 (server.go:404)"),
            ]
        );
        assert_eq!(c[1].0, "Client.run");
        assert!(c[2].0.starts_with("caller-") && c[3].0.starts_with("caller-"));
        let d = run.outcome.deadlock().unwrap();
        assert_eq!(d.cycle[2].holds[0].resource, "streamLock");
        assert_eq!(d.cycle[2].holds[0].mode, "write");
        assert_eq!(d.cycle[3].holds[0].resource, "sendLock");
        assert_eq!(d.cycle[1].released_by, vec![c[2].0.clone()], "the reader waits for the writer holding streamLock");
    }
}

#[test]
fn v1_2_0_and_v1_2_1_streams_have_no_recv_close_and_cite_their_own_lines() {
    // The same design deadlocks the same way in both forms; what differs is
    // the stream (recvClose from v1.2.2) and the lines each tag cites.
    for (client, recv_close, create_stream, get_stream, call) in [
        ("v1.2.0", false, "client.go:360", "client.go:379", "client.go:134"),
        ("v1.2.1", false, "client.go:360", "client.go:379", "client.go:134"),
        ("v1.2.2", true, "client.go:366", "client.go:385", "client.go:134"),
        ("v1.2.3", true, "client.go:405", "client.go:424", "client.go:173"),
    ] {
        let m = ttrpc("v1.0.2", client, &[]);
        let run = first_failure(&m, 0..200).expect("deadlock within 200 seeds");
        let c = cycle(&run);
        assert_eq!(c[1].3, format!("Client.getStream ({get_stream})"), "{client}");
        assert_eq!(c[2].3, format!("Client.createStream ({create_stream})"), "{client}");
        let d = run.outcome.deadlock().unwrap();
        assert_eq!(d.cycle[2].stack.last().unwrap().to_string(), format!("Client.Call ({call})"), "{client}");
        // A caller waiting for its response: its select's cases.
        let waiting = d
            .behind
            .iter()
            .find(|b| b.op == "select" && b.name.starts_with("caller-"))
            .unwrap_or_else(|| panic!("{client}: a caller waits for its response"));
        let id = waiting.waits_for.split('.').next().unwrap().trim_start_matches("recv ");
        let want = if recv_close {
            format!("recv {id}.recv | recv {id}.recvClose | recv c.ctx.Done()")
        } else {
            format!("recv {id}.recv | recv c.ctx.Done()")
        };
        assert_eq!(waiting.waits_for, want, "{client}");
    }
}

#[test]
fn every_other_cell_of_the_matrix_never_deadlocks() {
    let cells = [
        ("v1.0.2", "v1.1.0"),
        ("v1.0.2", "v1.2.4"),
        ("v1.1.0", "v1.1.0"),
        ("v1.1.0", "v1.2.4"),
        ("v1.2.3", "v1.0.2"),
        ("v1.2.3", "v1.1.0"),
        ("v1.2.3", "v1.2.3"),
        ("v1.2.3", "v1.2.4"),
        ("v1.2.4", "v1.0.2"),
        ("v1.2.4", "v1.2.3"),
    ];
    for (server, client) in cells {
        let m = ttrpc(server, client, &[]);
        if let Some(run) = first_failure(&m, 0..2_000) {
            panic!("{server} x {client} seed {}: {}", run.seed, run.outcome);
        }
    }
}

#[test]
fn fixed_clients_stay_clean_over_many_seeds_against_the_old_server() {
    for client in ["v1.1.0", "v1.2.4"] {
        let m = ttrpc("v1.0.2", client, &[]);
        if let Some(run) = first_failure(&m, 2_000..8_000) {
            panic!("v1.0.2 x {client} seed {}: {}", run.seed, run.outcome);
        }
    }
}

#[test]
fn unregistered_methods_make_the_new_server_reader_stop_reading() {
    // The v1.2.x reader itself waits in sendStatus for an unknown method, so
    // the new server applies back-pressure too, and the old clients hang on it.
    let m = ttrpc("v1.2.3", "v1.0.2", &[("unregistered-fraction", "0.5")]);
    let run = first_failure(&m, 0..200).expect("deadlock");
    let d = run.outcome.deadlock().unwrap();
    let reader = d.cycle.iter().find(|b| b.name == "serverConn.run.func2").expect("the reader is in the cycle");
    assert_eq!(reader.stack[0].to_string(), "serverConn.run.func1 (server.go:352)", "inside sendStatus");
    assert_eq!(reader.stack[1].to_string(), "serverConn.run.func2 (server.go:476)");
    // The fixed clients still drain, and every call gets its error status.
    for client in ["v1.1.0", "v1.2.4"] {
        let m = ttrpc("v1.2.3", client, &[("unregistered-fraction", "0.5")]);
        assert!(first_failure(&m, 0..1_000).is_none(), "{client}");
    }
}

#[test]
fn buffered_pipes_need_larger_payloads_to_fill() {
    // With 64 KiB of socket buffer each way, 4 KB messages never fill it...
    let m = ttrpc("v1.0.2", "v1.0.2", &[("pipe-buffer", "65536")]);
    assert!(first_failure(&m, 0..300).is_none());
    // ...but 200 KB payloads, as in the original report, do.
    let m = ttrpc("v1.0.2", "v1.0.2", &[("pipe-buffer", "65536"), ("payload", "204800")]);
    let run = first_failure(&m, 0..300).expect("deadlock with large payloads");
    let d = run.outcome.deadlock().unwrap();
    let writer = d.cycle.iter().find(|b| b.name == "Client.run").unwrap();
    assert_eq!(
        writer.stack[0].to_string(),
        "bufio.(*Writer).Write (bufio.go:623)",
        "the direct write of a large payload"
    );
}

#[test]
fn every_tag_is_accepted_and_others_are_rejected_with_the_list() {
    use sim::models::ttrpc::versions::{ClientDesign as C, ServerDesign as S, TAGS};
    let designs: Vec<(C, S)> = TAGS.iter().map(|t| (C::of(t).unwrap(), S::of(t).unwrap())).collect();
    #[rustfmt::skip]
    let expected = vec![
        (C::V1_0, S::V1_0), (C::V1_0, S::V1_0), (C::V1_0, S::V1_0),             // v1.0.0-v1.0.2
        (C::V1_1, S::V1_0), (C::V1_1, S::V1_0), (C::V1_1, S::V1_0),             // v1.1.0-v1.1.2
        (C::V1_2_0, S::V1_2), (C::V1_2_0, S::V1_2), (C::V1_2_0, S::V1_2), (C::V1_2_0, S::V1_2), // v1.2.0-v1.2.3
        (C::V1_2_4, S::V1_2), (C::V1_2_4, S::V1_2), (C::V1_2_4, S::V1_2), (C::V1_2_4, S::V1_2), (C::V1_2_4, S::V1_2),
    ];
    assert_eq!(designs, expected);
    for tag in TAGS {
        let m = ttrpc(tag, &tag[1..], &[]); // "1.2.3" is accepted too
        assert_eq!(m.params.iter().find(|p| p.name == "client").unwrap().value, *tag);
    }
    let err = models::find("ttrpc").unwrap().configure(&[("client".into(), "v1.3.0".into())]).err().expect("rejected");
    assert!(err.contains("--client: `v1.3.0` is not a ttrpc tag (accepted: v1.0.0, v1.0.1"), "{err}");
    let err = models::find("ttrpc").unwrap().configure(&[("callers".into(), "0".into())]).err().unwrap();
    assert!(err.contains("--callers: 0 is out of range"), "{err}");
    let err =
        models::find("ttrpc").unwrap().configure(&[("unregistered-fraction".into(), "1.5".into())]).err().unwrap();
    assert!(err.contains("--unregistered-fraction: 1.5 is out of range"), "{err}");
}
