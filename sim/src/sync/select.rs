//! Go's `select` statement.

use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::rt::{self, Dir, ResId, State, Wait};
use crate::trace::EventKind;

// The sealed trait's methods take the crate-private engine state: users can
// name neither, so they cannot implement or call them.
#[allow(private_interfaces)]
pub(crate) mod sealed {
    use super::*;

    /// The operations a select needs from a case. Sealed: the cases are
    /// [`crate::sync::RecvCase`] and [`crate::sync::SendCase`].
    pub trait Case {
        /// The channel and whether this is a send.
        fn resource(&self) -> (ResId, bool);
        fn ready(&self, s: &State) -> bool;
        fn complete(&mut self, s: &mut State);
        fn park(&mut self, s: &mut State, case: u32);
        fn finish_granted(&mut self, s: &mut State, grant: u32);
        fn cancel(&mut self, s: &mut State);
    }
}

/// A case of a [`select`]: made by `Chan::recv_case` or `Chan::send_case`.
pub trait SelectCase: sealed::Case {}
impl<C: sealed::Case> SelectCase for C {}

/// Go's `select`: a scheduling point. Among the cases that can proceed, one
/// is picked by the run's strategy (uniformly under `random`, as Go does);
/// with none ready, `default` returns
/// `None` at once, otherwise the task blocks until one case can proceed and
/// its index is returned.
///
/// ```
/// use sim::sync::{select, Chan};
/// let run = sim::Sim::new(3).run(|| async {
///     let calls: Chan<u32> = Chan::new("calls", 1);
///     let incoming: Chan<u32> = Chan::new("incoming", 1);
///     incoming.send(9).await;
///     let mut c = calls.recv_case();
///     let mut i = incoming.recv_case();
///     match select(&mut [&mut c, &mut i], false).await {
///         Some(1) => assert_eq!(i.take(), Some(9)),
///         other => panic!("unexpected {other:?}"),
///     }
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[track_caller]
pub fn select<'a, 'b>(cases: &'a mut [&'b mut dyn SelectCase], default: bool) -> Select<'a, 'b> {
    Select { cases, default, state: 0, at: Location::caller() }
}

/// The future returned by [`select`].
pub struct Select<'a, 'b> {
    cases: &'a mut [&'b mut dyn SelectCase],
    default: bool,
    /// 0: not yet yielded; 1: first attempt due; 2: parked.
    state: u8,
    /// The model's line of the select, where a misuse (a send on a closed
    /// channel) is reported.
    at: &'static Location<'static>,
}

impl Future for Select<'_, '_> {
    type Output = Option<usize>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<usize>> {
        let this = &mut *self;
        rt::with_at(this.at, |s| {
            let me = s.current;
            if this.state == 0 {
                this.state = 1;
                if !s.yield_now() {
                    return Poll::Pending;
                }
            }
            match this.state {
                1 => {
                    let n = this.cases.len();
                    // Which cases are ready depends on every case's channel.
                    for c in this.cases.iter() {
                        s.touch_read(c.resource().0);
                    }
                    let ready = this.cases.iter().filter(|c| c.ready(s)).count();
                    if ready > 0 {
                        let k = s.pick_index(ready);
                        let i = (0..n).filter(|&i| this.cases[i].ready(s)).nth(k).unwrap();
                        s.record(me, EventKind::Select, None, Some(i as u64), None, None, None);
                        this.cases[i].complete(s);
                        if this.default {
                            // A poll that found a case ready: something new
                            // (the step makes it unlike any other), which
                            // ends a spin on this select (see `spin.rs`).
                            let step = s.step;
                            s.strategy.get().polled(me, !step);
                        }
                        return Poll::Ready(Some(i));
                    }
                    if this.default {
                        // The cases, as one number: which channels, which way.
                        let cases = this.cases.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
                            let (r, send) = c.resource();
                            (h ^ (u64::from(r) << 1 | u64::from(send))).wrapping_mul(0x0100_0000_01b3)
                        });
                        s.strategy.get().polled(me, cases);
                        s.record(me, EventKind::Select, None, Some(n as u64), None, None, None);
                        return Poll::Ready(None);
                    }
                    s.tasks[me as usize].cases.clear();
                    for (i, c) in this.cases.iter_mut().enumerate() {
                        let (r, send) = c.resource();
                        c.park(s, i as u32);
                        s.tasks[me as usize].cases.push((r, if send { Dir::Send } else { Dir::Recv }));
                    }
                    this.state = 2;
                    s.block(Wait::Select);
                    Poll::Pending
                }
                _ => {
                    let g = s.take_grant().expect("a parked select resumes only when granted");
                    let i = (g & !super::chan::CLOSED) as usize;
                    for (j, c) in this.cases.iter_mut().enumerate() {
                        if j != i {
                            c.cancel(s);
                        }
                    }
                    s.record(me, EventKind::Select, None, Some(i as u64), None, None, None);
                    this.cases[i].finish_granted(s, g);
                    Poll::Ready(Some(i))
                }
            }
        })
    }
}
