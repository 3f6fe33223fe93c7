//! loom models of joule-jobs' queues: the Chase-Lev deque (owner against thieves, the last
//! job, the owner's fair turn at its oldest job, slot re-use, overflow into the
//! injector), the chunk claimer behind `parallel_for_async`, a scope's count of its
//! unfinished jobs, and the inbox.
//!
//! Each model drives the real code (under `--cfg loom` the deque has two slots, so "full"
//! and "spill" are reached with two or three jobs) and checks the one invariant that
//! matters for a queue of jobs: every job is taken exactly once, nothing is lost and
//! nothing runs twice. Jobs record themselves in a [`Tally`] when they run; after joining,
//! the model drains whatever is left and asserts each id ran once. loom also checks every
//! access to a deque slot (a `loom::cell::UnsafeCell`) for data races, which is what the
//! slot re-use model relies on. The wake-up protocols are in `jobs_sleep.rs`.
#![cfg(loom)]

use joule_jobs::DEQUE_CAPACITY;
use joule_jobs::Job;
use joule_jobs::deque::{self, Steal, Stealer, Worker};
use joule_jobs::inbox::Inbox;
use joule_jobs::injector::Injector;
use joule_jobs::latch::{ChunkClaimer, ScopeCount};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use loom_tests::{Model, Seen, Tally, model, nudge};

/// The deque models are small, so they always search with at least 3 preemptions: with
/// 2, loom misses the double take that removing the `SeqCst` fence from `pop` (or from
/// `steal`) causes, which it finds with 3 (checked by mutating deque.rs).
const DEQUE_PREEMPTIONS: usize = 3;

/// Steals until the deque hands out a job or looks empty. `Retry` means another consumer
/// moved `top` first, so each retry follows someone's progress and the loop is bounded.
fn steal(s: &Stealer) -> Option<Job> {
    loop {
        match s.steal() {
            Steal::Success(job) => return Some(job),
            Steal::Empty => return None,
            Steal::Retry => thread::yield_now(),
        }
    }
}

/// The owner's push as `registry.rs`'s `push_or_spill` does it (that file is not compiled
/// under loom): on a refusal, move half of the ring to the injector and try once more,
/// else the job itself goes to the injector. Returns whether the first push was refused.
fn push_or_spill(w: &Worker, injector: &Injector, job: Job) -> bool {
    match w.push(job) {
        Ok(()) => false,
        Err(job) => {
            w.take_half(|j| injector.push(j));
            if let Err(job) = w.push(job) {
                injector.push(job);
            }
            true
        }
    }
}

/// Runs everything still queued once all threads are joined.
fn drain(w: &Worker, injector: Option<&Injector>) {
    while let Some(job) = w.pop() {
        job.run();
    }
    if let Some(injector) = injector {
        while let Some(job) = injector.pop() {
            job.run();
        }
    }
}

#[test]
fn deque_capacity_is_shrunk_under_loom() {
    // The models below count on a two-slot ring: two pushes fill it, the third is refused
    // and position 2 re-uses slot 0.
    assert_eq!(DEQUE_CAPACITY, 2);
}

/// The last-job race: the owner pops while a thief steals the only job. Exactly one of
/// them gets it (Chase-Lev's CAS on `top` for the last element). Nudge point 0: the owner
/// lets the thief go first.
#[test]
fn deque_owner_pop_vs_thief_on_the_last_job() {
    static TALLY: Tally = Tally::new();
    static THIEF_WON: Seen = Seen::new();
    static OWNER_WON: Seen = Seen::new();
    Model::new("deque_owner_pop_vs_thief_on_the_last_job")
        .nudges(1)
        .min_preemptions(DEQUE_PREEMPTIONS)
        .check(|at| {
            let tally = TALLY.reset(1);
            let (w, s) = deque::new();
            w.push(tally.job(0)).unwrap();
            let thief = thread::spawn(move || steal(&s).map(Job::run).is_some());
            nudge(at, 0);
            let owner_won = w.pop().map(Job::run).is_some();
            let thief_won = thief.join().unwrap();
            assert!(
                owner_won != thief_won,
                "exactly one side takes the last job"
            );
            if thief_won {
                THIEF_WON.mark();
            } else {
                OWNER_WON.mark();
            }
            assert!(w.pop().is_none() && w.is_empty());
            tally.assert_each_ran_once();
        });
    THIEF_WON.assert_seen("the thief wins the last job");
    OWNER_WON.assert_seen("the owner wins the last job");
}

/// `join`'s take-back: the owner pushes its second half at a known position, a thief may
/// steal it, and `pop_at(position)` returns it only if no thief did. Below it sits an older
/// job, which the thief takes first; `pop_at` must never return that one.
#[test]
fn deque_pop_at_vs_thief() {
    static TALLY: Tally = Tally::new();
    static TOOK_BACK: Seen = Seen::new();
    static STOLEN: Seen = Seen::new();
    Model::new("deque_pop_at_vs_thief")
        .nudges(1)
        .min_preemptions(DEQUE_PREEMPTIONS)
        .check(|at| {
            let tally = TALLY.reset(2);
            let (w, s) = deque::new();
            w.push(tally.job(0)).unwrap();
            let pos = w.next_position();
            w.push(tally.job(1)).unwrap();
            let thief = thread::spawn(move || {
                // Two steals: the older job, then (maybe) the one `pop_at` wants back.
                let n = steal(&s).map(Job::run).is_some() as usize;
                n + steal(&s).map(Job::run).is_some() as usize
            });
            nudge(at, 0);
            if let Some(job) = w.pop_at(pos) {
                job.run();
                assert_eq!(tally.runs(1), 1, "pop_at returned the job pushed at `pos`");
                TOOK_BACK.mark();
            } else {
                STOLEN.mark();
            }
            thief.join().unwrap();
            drain(&w, None);
            tally.assert_each_ran_once();
        });
    TOOK_BACK.assert_seen("pop_at takes its job back");
    STOLEN.assert_seen("pop_at finds its job stolen");
}

/// Two thieves and the owner on two jobs: thief against thief (the CAS on `top`) and a
/// three-way race for the last job. Every job is taken once; leftovers are popped after.
/// Nudge points: 0 the owner yields before popping, 1 and 2 each thief before stealing.
#[test]
fn deque_two_thieves_and_owner() {
    static TALLY: Tally = Tally::new();
    static THIEF_RETRIED: Seen = Seen::new();
    Model::new("deque_two_thieves_and_owner")
        .nudges(3)
        .min_preemptions(DEQUE_PREEMPTIONS)
        .check(|at| {
            let tally = TALLY.reset(2);
            let (w, s) = deque::new();
            w.push(tally.job(0)).unwrap();
            w.push(tally.job(1)).unwrap();
            let thieves: Vec<_> = (0..2)
                .map(|i| {
                    let s = s.clone();
                    thread::spawn(move || {
                        nudge(at, 1 + i);
                        loop {
                            match s.steal() {
                                Steal::Success(job) => break job.run(),
                                Steal::Empty => break,
                                Steal::Retry => THIEF_RETRIED.mark(),
                            }
                            thread::yield_now();
                        }
                    })
                })
                .collect();
            nudge(at, 0);
            if let Some(job) = w.pop() {
                job.run();
            }
            for t in thieves {
                t.join().unwrap();
            }
            drain(&w, None);
            tally.assert_each_ran_once();
        });
    THIEF_RETRIED.assert_seen("a thief loses the CAS on `top` and retries");
}

/// A fair turn (issue 28): every 61st look a thread takes the *oldest* job of its own
/// deque through the deque's stealer, as a thief would, then goes back to popping the
/// newest. Here the owner does both on two jobs while a thief steals: the owner's steal
/// races the thief's for `top`, and its pop races for the last job. Every job is taken
/// once. Nudge points: 0 the owner yields before its own steal, 1 before its pop, 2 the
/// thief before stealing.
#[test]
fn deque_owner_takes_its_oldest_job_beside_a_thief() {
    static TALLY: Tally = Tally::new();
    static OWN_OLDEST: Seen = Seen::new();
    Model::new("deque_owner_takes_its_oldest_job_beside_a_thief")
        .nudges(3)
        .min_preemptions(DEQUE_PREEMPTIONS)
        .check(|at| {
            let tally = TALLY.reset(2);
            let (w, s) = deque::new();
            w.push(tally.job(0)).unwrap();
            w.push(tally.job(1)).unwrap();
            let thief = {
                let s = s.clone();
                thread::spawn(move || {
                    nudge(at, 2);
                    if let Some(job) = steal(&s) {
                        job.run();
                    }
                })
            };
            nudge(at, 0);
            if let Some(job) = steal(&w.stealer()) {
                OWN_OLDEST.mark();
                job.run();
            }
            nudge(at, 1);
            if let Some(job) = w.pop() {
                job.run();
            }
            thief.join().unwrap();
            drain(&w, None);
            tally.assert_each_ran_once();
        });
    OWN_OLDEST.assert_seen("the owner takes its oldest job through its stealer");
}

/// Slot re-use (the `full` flag): the ring is full (positions 0 and 1), a thief takes
/// position 0 and copies it out of slot 0 while the owner pushes position 2, which maps to
/// the same slot. The owner may write slot 0 only after the thief has finished copying
/// (loom reports a data race on the slot otherwise); while the thief is still copying the
/// push is refused, and the owner spills as `push_or_spill` does. Nudge point 0: the owner
/// yields before that push.
#[test]
fn deque_slot_reuse_while_thief_copies() {
    static TALLY: Tally = Tally::new();
    static REUSED: Seen = Seen::new();
    static REFUSED_WHILE_COPYING: Seen = Seen::new();
    Model::new("deque_slot_reuse_while_thief_copies")
        .nudges(1)
        .min_preemptions(DEQUE_PREEMPTIONS)
        .check(|at| {
            let tally = TALLY.reset(3);
            let injector = Injector::new();
            let (w, s) = deque::new();
            w.push(tally.job(0)).unwrap();
            w.push(tally.job(1)).unwrap();
            let thief = thread::spawn(move || steal(&s).map(Job::run).is_some());
            nudge(at, 0);
            assert_eq!(w.next_position() & (DEQUE_CAPACITY - 1), 0, "slot 0 again");
            match w.push(tally.job(2)) {
                Ok(()) => REUSED.mark(),
                Err(job) => {
                    // `len` reads `top` Relaxed; 1 means the thief has claimed position 0 but
                    // the push was refused: its flag was still set (or `top` read stale).
                    if w.len() < DEQUE_CAPACITY {
                        REFUSED_WHILE_COPYING.mark();
                    }
                    w.take_half(|j| injector.push(j));
                    if let Err(job) = w.push(job) {
                        injector.push(job);
                    }
                }
            }
            assert!(thief.join().unwrap(), "the ring was never empty");
            drain(&w, Some(&injector));
            tally.assert_each_ran_once();
        });
    REUSED.assert_seen("the owner re-uses the slot a thief has emptied");
    REFUSED_WHILE_COPYING.assert_seen("the owner is refused while the thief holds the slot");
}

/// Overflow: the owner pushes three jobs into the two-slot ring while a thief steals, so
/// some executions refuse a push, move half of the ring to the injector with `take_half`
/// (whose CAS on `top` races the thief's) and push again. The thief also pops the injector.
/// Nudge points: 0..3 the owner yields before push 0..3, 3 the thief between its steal
/// and its injector pop.
#[test]
fn deque_overflow_spills_to_injector_under_a_thief() {
    static TALLY: Tally = Tally::new();
    static SPILLED: Seen = Seen::new();
    static THIEF_GOT_SPILL: Seen = Seen::new();
    Model::new("deque_overflow_spills_to_injector_under_a_thief")
        .nudges(4)
        .min_preemptions(DEQUE_PREEMPTIONS)
        .check(|at| {
            let tally = TALLY.reset(3);
            let injector = Arc::new(Injector::new());
            let (w, s) = deque::new();
            let thief = {
                let injector = injector.clone();
                thread::spawn(move || {
                    if let Some(job) = steal(&s) {
                        job.run();
                    }
                    nudge(at, 3);
                    if let Some(job) = injector.pop() {
                        THIEF_GOT_SPILL.mark();
                        job.run();
                    }
                })
            };
            for id in 0..3 {
                nudge(at, id);
                if push_or_spill(&w, &injector, tally.job(id)) {
                    SPILLED.mark();
                }
            }
            thief.join().unwrap();
            drain(&w, Some(&injector));
            tally.assert_each_ran_once();
        });
    SPILLED.assert_seen("a refused push spills half of the ring to the injector");
    THIEF_GOT_SPILL.assert_seen("the thief takes a spilled job from the injector");
}

/// Jobs left in a deque when it is dropped are dropped exactly once, not leaked and not
/// run (the `Drop` of the ring walks `top..bottom`), also after a thief moved `top`.
#[test]
fn deque_drop_releases_untaken_jobs() {
    static TALLY: Tally = Tally::new();
    model("deque_drop_releases_untaken_jobs", || {
        let tally = TALLY.reset(2);
        let (w, s) = deque::new();
        w.push(tally.job(0)).unwrap();
        w.push(tally.job(1)).unwrap();
        let thief = thread::spawn(move || {
            if let Some(job) = steal(&s) {
                job.run();
            }
        });
        thief.join().unwrap();
        assert_eq!(tally.drops(1), 0, "the job is still in the deque");
        drop(w);
        assert_eq!(tally.runs(0), 1, "the thief takes the oldest job");
        assert_eq!(tally.runs(1), 0, "a dropped job does not run");
        assert_eq!(tally.drops(0), 1, "a job run is dropped once");
        assert_eq!(
            tally.drops(1),
            1,
            "the dropped deque released the job it held"
        );
    });
}

/// `parallel_for_async`'s bookkeeping with two participants claiming and finishing chunks:
/// each chunk index is claimed once, exactly one `finish()` reports "last", and the last
/// finisher sees every chunk's writes (its `AcqRel` increment acquires all the others;
/// with `Relaxed` there, loom lets the last finisher read a chunk's write as 0). Nudge
/// points: 0 the main participant yields before it starts, 1 after its first claim, 2 the
/// helper after its first claim.
fn chunk_claimer_model(name: &str, tally: &'static Tally, total: usize) {
    Model::new(name).nudges(3).check(move |at| {
        let tally = tally.reset(total);
        let claimer = Arc::new(ChunkClaimer::new(total));
        let written: Arc<Vec<AtomicUsize>> =
            Arc::new((0..total).map(|_| AtomicUsize::new(0)).collect());
        let participate = {
            move |claimer: &ChunkClaimer, written: &[AtomicUsize], nudge_point: usize| {
                let mut last = 0;
                let mut first = true;
                while let Some(i) = claimer.claim() {
                    if std::mem::take(&mut first) {
                        nudge(at, nudge_point);
                    }
                    // Relaxed: only the AcqRel of `finish` may publish the chunk's write.
                    written[i].store(1, Ordering::Relaxed);
                    tally.job(i).run();
                    if claimer.finish() {
                        last += 1;
                        for (k, w) in written.iter().enumerate() {
                            assert_eq!(w.load(Ordering::Relaxed), 1, "chunk {k} not visible");
                        }
                    }
                }
                last
            }
        };
        let helper = {
            let (claimer, written) = (claimer.clone(), written.clone());
            thread::spawn(move || participate(&claimer, &written, 2))
        };
        nudge(at, 0);
        let lasts = participate(&claimer, &written, 1) + helper.join().unwrap();
        assert_eq!(lasts, 1, "exactly one participant finishes last");
        tally.assert_each_ran_once();
        assert!(claimer.claim().is_none());
    });
}

#[test]
fn chunk_claimer_two_chunks() {
    static TALLY: Tally = Tally::new();
    chunk_claimer_model("chunk_claimer_two_chunks", &TALLY, 2);
}

#[test]
fn chunk_claimer_three_chunks() {
    static TALLY: Tally = Tally::new();
    chunk_claimer_model("chunk_claimer_three_chunks", &TALLY, 3);
}

/// An empty range has zero chunks: nobody claims anything and so nobody ever calls
/// `finish()`, which means no participant could dispatch the completion. That is why
/// `parallel_for_async` dispatches it at the call site when `chunks == 0` (and spawns no
/// participants). The model pins the claimer's side of that contract.
#[test]
fn chunk_claimer_zero_chunks_never_reports_last() {
    model("chunk_claimer_zero_chunks_never_reports_last", || {
        let claimer = Arc::new(ChunkClaimer::new(0));
        let other = {
            let claimer = claimer.clone();
            thread::spawn(move || claimer.claim())
        };
        assert_eq!(claimer.claim(), None);
        assert_eq!(other.join().unwrap(), None);
        assert_eq!(claimer.total(), 0);
    });
}

/// An inbox fed by two producers while its owner pops: every job is popped once (some
/// concurrently, the rest after joining) and each producer's jobs run in the order it
/// pushed them. Producer A pushes ids 0, 1; producer B pushes ids 2, 3. Nudge points: 0
/// and 1 the owner yields before its first and second pop, 2 producer A between pushes.
#[test]
fn inbox_two_producers_owner_pops() {
    static TALLY: Tally = Tally::new();
    static POPPED_CONCURRENTLY: Seen = Seen::new();
    Model::new("inbox_two_producers_owner_pops")
        .nudges(3)
        .check(|at| {
            let tally = TALLY.reset(4);
            let inbox = Arc::new(Inbox::new());
            let producers: Vec<_> = [[0, 1], [2, 3]]
                .into_iter()
                .map(|ids| {
                    let inbox = inbox.clone();
                    thread::spawn(move || {
                        for id in ids {
                            assert!(inbox.push(tally.job(id)).is_ok(), "open inbox");
                            if id == 0 {
                                nudge(at, 2);
                            }
                        }
                    })
                })
                .collect();
            for k in 0..2 {
                nudge(at, k);
                if let Some(job) = inbox.pop() {
                    POPPED_CONCURRENTLY.mark();
                    job.run();
                }
            }
            for p in producers {
                p.join().unwrap();
            }
            assert!(
                !inbox.is_empty(),
                "at most two of the four jobs were popped"
            );
            while let Some(job) = inbox.pop() {
                job.run();
            }
            assert!(inbox.is_empty());
            tally.assert_each_ran_once();
            let order = tally.order();
            let at = |id| order.iter().position(|&x| x == id).unwrap();
            assert!(at(0) < at(1), "producer A's FIFO order broken: {order:?}");
            assert!(at(2) < at(3), "producer B's FIFO order broken: {order:?}");
        });
    POPPED_CONCURRENTLY.assert_seen("the owner pops while the producers push");
}

/// Closing an inbox (its thread unregisters) while a producer pushes: each job is either
/// taken by `close` (and handed on) or refused by `push` (and handed back to the
/// producer), exactly once; none is left in the closed inbox where nobody would run it.
/// Nudge point 0: the producer yields between its two pushes.
#[test]
fn inbox_close_vs_push_strands_nothing() {
    static TALLY: Tally = Tally::new();
    static REFUSED: Seen = Seen::new();
    static TAKEN: Seen = Seen::new();
    Model::new("inbox_close_vs_push_strands_nothing")
        .nudges(1)
        .check(|at| {
            let tally = TALLY.reset(2);
            let inbox = Arc::new(Inbox::new());
            let producer = {
                let inbox = inbox.clone();
                thread::spawn(move || {
                    for id in 0..2 {
                        if let Err(job) = inbox.push(tally.job(id)) {
                            REFUSED.mark();
                            job.run();
                        }
                        nudge(at, 0);
                    }
                })
            };
            for job in inbox.close() {
                TAKEN.mark();
                job.run();
            }
            producer.join().unwrap();
            assert!(inbox.is_closed());
            assert!(inbox.pop().is_none(), "a job slipped into a closed inbox");
            tally.assert_each_ran_once();
        });
    REFUSED.assert_seen("a push after close is refused");
    TAKEN.assert_seen("close takes a job pushed before it");
}

/// A registration guard dropped inside a `scope` body (issue 28): the thread's inbox is
/// closed at once while the scope's wait goes on popping and checking it. The owner pops,
/// closes (handing over what is queued) and pops again, as that wait does, while a
/// producer pushes three jobs: each is popped before the close, taken by it or refused
/// (and run by the producer), exactly once, and the closed inbox neither hands out nor
/// reports a job afterwards. Nudge points: 0 the owner yields before its first pop, 1
/// before closing, 2 the producer between its pushes.
#[test]
fn inbox_closed_while_its_owner_still_waits_pops_nothing_more() {
    static TALLY: Tally = Tally::new();
    static POPPED: Seen = Seen::new();
    static REFUSED: Seen = Seen::new();
    static TAKEN: Seen = Seen::new();
    Model::new("inbox_closed_while_its_owner_still_waits_pops_nothing_more")
        .nudges(3)
        .check(|at| {
            let tally = TALLY.reset(3);
            let inbox = Arc::new(Inbox::new());
            let producer = {
                let inbox = inbox.clone();
                thread::spawn(move || {
                    for id in 0..3 {
                        if let Err(job) = inbox.push(tally.job(id)) {
                            REFUSED.mark();
                            job.run();
                        }
                        nudge(at, 2);
                    }
                })
            };
            nudge(at, 0);
            if let Some(job) = inbox.pop() {
                POPPED.mark();
                job.run();
            }
            nudge(at, 1);
            for job in inbox.close() {
                TAKEN.mark();
                job.run();
            }
            assert!(inbox.pop().is_none(), "a closed inbox handed out a job");
            assert!(inbox.is_empty(), "a closed inbox reported work");
            producer.join().unwrap();
            assert!(inbox.pop().is_none(), "a job slipped into a closed inbox");
            tally.assert_each_ran_once();
        });
    POPPED.assert_seen("the owner pops before the close");
    REFUSED.assert_seen("a push after the close is refused");
    TAKEN.assert_seen("the close takes a job pushed before it");
}

/// A scope's count (`ScopeCount`, issue 28 item 5): the owner counts its own spawns during
/// the body apart, without a read-modify-write, and adds them when the body returns. Two
/// jobs the owner spawned run on other threads; the first spawns a third from its thread
/// before it finishes. Exactly one of the four finishes (three jobs and the body) reports
/// "last", never before every job finished, and the one that does sees every job's write
/// (the `AcqRel` of `finish`). Nudge points: 0 the owner before it ends the body, 1 the
/// first job before it spawns, 2 the second job before it finishes.
#[test]
fn scope_count_reports_last_once_after_every_job() {
    static TALLY: Tally = Tally::new();
    Model::new("scope_count_reports_last_once_after_every_job")
        .nudges(3)
        .check(|at| {
            let tally = TALLY.reset(3);
            let count = Arc::new(ScopeCount::new());
            let written: Arc<Vec<AtomicUsize>> =
                Arc::new((0..3).map(|_| AtomicUsize::new(0)).collect());
            let finish = move |count: &ScopeCount, written: &[AtomicUsize], id: usize| {
                // Relaxed: only the AcqRel of `finish` may publish the job's write.
                written[id].store(1, Ordering::Relaxed);
                tally.job(id).run();
                let last = count.job_done();
                if last {
                    for (k, w) in written.iter().enumerate() {
                        assert_eq!(w.load(Ordering::Relaxed), 1, "job {k} not visible");
                    }
                }
                usize::from(last)
            };
            count.owner_spawned();
            let first = {
                let (count, written) = (count.clone(), written.clone());
                thread::spawn(move || {
                    nudge(at, 1);
                    count.spawned();
                    let third = {
                        let (count, written) = (count.clone(), written.clone());
                        thread::spawn(move || finish(&count, &written, 2))
                    };
                    finish(&count, &written, 0) + third.join().unwrap()
                })
            };
            count.owner_spawned();
            let second = {
                let (count, written) = (count.clone(), written.clone());
                thread::spawn(move || {
                    nudge(at, 2);
                    finish(&count, &written, 1)
                })
            };
            nudge(at, 0);
            let mut lasts = usize::from(count.body_done());
            if lasts == 1 {
                for (k, w) in written.iter().enumerate() {
                    assert_eq!(w.load(Ordering::Relaxed), 1, "job {k} not visible");
                }
            }
            lasts += first.join().unwrap() + second.join().unwrap();
            assert_eq!(lasts, 1, "exactly one finish reports the last job");
            tally.assert_each_ran_once();
        });
}
