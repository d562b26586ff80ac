//! A linearizability checker for a history of register operations (read, write,
//! compare-and-set) on many keys: the Wing–Gong search as Knossos and Porcupine do it.
//!
//! - **P-compositionality**: a history is linearizable iff the sub-history of each key is,
//!   so every key is checked on its own ([`check`] splits by key).
//! - **Search**: depth first over the operations that may take effect next (those invoked
//!   before the earliest completion among the operations not yet placed), each tried on the
//!   register model; a dead end backtracks.
//! - **Memoisation**: a (set of placed operations, register value) configuration already
//!   explored is never explored again (Lowe's cache), which keeps the search polynomial on
//!   the histories a correct system produces.
//! - **Unknown outcomes**: an operation whose client timed out may have happened at any
//!   time after its invocation, or never. It is given no completion (it never bounds the
//!   others) and the history is accepted once every *completed* operation is placed: an
//!   unknown operation left unplaced is one that never took effect (or took effect after
//!   everything, where nothing observed it). Completed operations are tried before unknown
//!   ones, so a valid history is found without wandering through the unknown ones.
//! - **Unobserved unknown operations first left out**: a timed-out write (or CAS) whose
//!   value no completed operation observed (directly, or through a timed-out CAS from it
//!   whose value was observed) is first left out, as if it never took effect; each one left
//!   in would multiply the configurations to explore, since it may be placed anywhere after
//!   its invocation. A linearization found without them is one of the whole history (an
//!   unknown operation may not have happened). When none is found, the verdict stands if no
//!   CAS returned false: a value nobody observed can only matter to a CAS that needs the
//!   register to hold something other than what it expected, so in any linearization of
//!   the whole history the operations left out can be taken out again. Otherwise the whole
//!   history is searched.
//! - Operations known to have failed (refused before they reached a leader) and reads that
//!   returned nothing are not part of the history the caller passes in.
//!
//! The search is bounded by a step budget; a key that exhausts it is reported as
//! [`KeyVerdict::GaveUp`], never as linearizable.

use std::collections::{BTreeMap, HashMap, HashSet};

/// What an operation did to the register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpKind {
    /// A read that returned `value` (None: the key was absent).
    Read { value: Option<String> },
    /// A write of `value`.
    Write { value: String },
    /// Compare-and-set: if the register holds `expected`, set it to `new`. `result` is the
    /// answer (Some(true): swapped, Some(false): did not), None when the outcome is unknown.
    Cas { expected: Option<String>, new: String, result: Option<bool> },
}

/// One operation of a history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// The client that issued it (for reports only).
    pub client: u64,
    pub key: String,
    pub kind: OpKind,
    /// Invocation time (any monotonic unit, e.g. microseconds).
    pub invoke: u64,
    /// Completion time, or None when the outcome is unknown (the client timed out).
    pub complete: Option<u64>,
}

/// The verdict on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyVerdict {
    Linearizable,
    /// No linearization exists. `stuck_at` is a completed operation that no extension of the
    /// longest linearizable prefix found could place (with its index in the key's history).
    Violation {
        placed: usize,
        of: usize,
        stuck_at: Box<Op>,
    },
    /// The step budget ran out before an answer.
    GaveUp {
        steps: u64,
    },
}

/// The verdict on a whole history.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub keys: BTreeMap<String, KeyVerdict>,
}

impl Report {
    pub fn violations(&self) -> usize {
        self.keys.values().filter(|v| matches!(v, KeyVerdict::Violation { .. })).count()
    }
    pub fn gave_up(&self) -> usize {
        self.keys.values().filter(|v| matches!(v, KeyVerdict::GaveUp { .. })).count()
    }
    pub fn is_linearizable(&self) -> bool {
        self.keys.values().all(|v| *v == KeyVerdict::Linearizable)
    }
}

/// The default step budget of one key's search.
pub const DEFAULT_BUDGET: u64 = 50_000_000;

/// Checks every key of `history` (P-compositionality), each within `budget` steps.
pub fn check(history: &[Op], budget: u64) -> Report {
    let mut by_key: BTreeMap<&str, Vec<Op>> = BTreeMap::new();
    for op in history {
        by_key.entry(op.key.as_str()).or_default().push(op.clone());
    }
    let mut report = Report::default();
    for (k, ops) in by_key {
        report.keys.insert(k.to_string(), check_key(&ops, budget));
    }
    report
}

/// An operation with its values interned (0 = absent).
#[derive(Clone, Copy)]
enum Step {
    Read(u32),
    Write(u32),
    Cas { expected: u32, new: u32, result: Option<bool> },
}

impl Step {
    /// The register after this operation from `state`, or None when it cannot take effect
    /// there with the result it returned.
    fn apply(self, state: u32) -> Option<u32> {
        match self {
            Step::Read(v) => (v == state).then_some(state),
            Step::Write(v) => Some(v),
            Step::Cas { expected, new, result: Some(true) } => (expected == state).then_some(new),
            Step::Cas { expected, result: Some(false), .. } => (expected != state).then_some(state),
            // Unknown: if it took effect and swapped; one that did not swap is the same as
            // one that never happened, which leaving it unplaced already covers.
            Step::Cas { expected, new, result: None } => (expected == state).then_some(new),
        }
    }
}

/// Checks the operations of one key (all with the same key) within `budget` steps (see the
/// module comment: first without the unobserved unknown operations).
pub fn check_key(ops: &[Op], budget: u64) -> KeyVerdict {
    let written = |o: &Op| match &o.kind {
        OpKind::Write { value } => Some(value.clone()),
        OpKind::Cas { new, .. } => Some(new.clone()),
        OpKind::Read { .. } => None,
    };
    // The values something needs to have been written: what completed operations observed,
    // then what the timed-out CAS that wrote one of those expected, and so on.
    let mut needed: HashSet<String> = HashSet::new();
    for o in ops.iter().filter(|o| o.complete.is_some()) {
        match &o.kind {
            OpKind::Read { value: Some(v) } => {
                needed.insert(v.clone());
            }
            OpKind::Cas { expected: Some(v), .. } => {
                needed.insert(v.clone());
            }
            _ => {}
        }
    }
    loop {
        let before = needed.len();
        for o in ops.iter().filter(|o| o.complete.is_none()) {
            if let OpKind::Cas { expected: Some(e), new, .. } = &o.kind {
                if needed.contains(new) {
                    needed.insert(e.clone());
                }
            }
        }
        if needed.len() == before {
            break;
        }
    }
    let keep = |o: &&Op| o.complete.is_some() || written(o).is_some_and(|v| needed.contains(&v));
    let reduced: Vec<Op> = ops.iter().filter(keep).cloned().collect();
    if reduced.len() == ops.len() {
        return search(ops, budget);
    }
    let cas_false =
        ops.iter().any(|o| o.complete.is_some() && matches!(o.kind, OpKind::Cas { result: Some(false), .. }));
    match search(&reduced, budget) {
        KeyVerdict::Violation { .. } if cas_false => search(ops, budget),
        v => v,
    }
}

/// The Wing–Gong search over `ops` (one key) within `budget` steps.
fn search(ops: &[Op], budget: u64) -> KeyVerdict {
    let mut names: HashMap<String, u32> = HashMap::new();
    let mut intern = |v: &Option<String>| -> u32 {
        match v {
            None => 0,
            Some(s) => {
                let n = names.len() as u32 + 1;
                *names.entry(s.clone()).or_insert(n)
            }
        }
    };
    // Known operations in invocation order, then unknown ones in invocation order.
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by_key(|&i| (ops[i].complete.is_none(), ops[i].invoke, ops[i].complete));
    let known = order.iter().filter(|&&i| ops[i].complete.is_some()).count();
    let steps: Vec<Step> = order
        .iter()
        .map(|&i| match &ops[i].kind {
            OpKind::Read { value } => Step::Read(intern(value)),
            OpKind::Write { value } => Step::Write(intern(&Some(value.clone()))),
            OpKind::Cas { expected, new, result } => {
                Step::Cas { expected: intern(expected), new: intern(&Some(new.clone())), result: *result }
            }
        })
        .collect();
    let invoke: Vec<u64> = order.iter().map(|&i| ops[i].invoke).collect();
    let complete: Vec<u64> = order.iter().map(|&i| ops[i].complete.unwrap_or(u64::MAX)).collect();
    let n = order.len();
    if known == 0 {
        return KeyVerdict::Linearizable;
    }

    let words = n.div_ceil(64);
    let mut placed = vec![0u64; words];
    let is_placed = |p: &[u64], i: usize| p[i / 64] >> (i % 64) & 1 == 1;
    let mut seen: HashSet<(Vec<u64>, u32)> = HashSet::new();

    // The candidates of a configuration: the unplaced operations invoked no later than the
    // earliest completion M of an unplaced known operation (no unplaced operation completed
    // before they began). Known ones in invocation order first (scanned from the first
    // unplaced one: an operation invoked after the running M completes after it too, so the
    // scan stops there), then unknown ones.
    let candidates = |p: &[u64], first: usize| -> Vec<usize> {
        let mut min_complete = u64::MAX;
        let mut out = Vec::new();
        let mut i = first;
        while i < known && invoke[i] <= min_complete {
            if !is_placed(p, i) {
                out.push(i);
                min_complete = min_complete.min(complete[i]);
            }
            i += 1;
        }
        // Keep only those invoked by the final minimum (one admitted early may be invoked
        // after a completion found later in the scan).
        out.retain(|&c| invoke[c] <= min_complete);
        for (u, &inv) in invoke.iter().enumerate().skip(known) {
            if inv > min_complete {
                break;
            }
            if !is_placed(p, u) {
                out.push(u);
            }
        }
        out
    };

    struct Frame {
        cands: Vec<usize>,
        next: usize,
        /// The operation placed to reach this frame, and the state before it.
        via: Option<(usize, u32)>,
    }
    let mut state = 0u32;
    let mut placed_known = 0usize;
    let mut first_unplaced = 0usize;
    let mut best = 0usize;
    let mut best_first = 0usize;
    let mut stack = vec![Frame { cands: candidates(&placed, 0), next: 0, via: None }];
    let mut steps_taken = 0u64;
    while let Some(top) = stack.last_mut() {
        steps_taken += 1;
        if steps_taken > budget {
            return KeyVerdict::GaveUp { steps: steps_taken };
        }
        if top.next < top.cands.len() {
            let c = top.cands[top.next];
            top.next += 1;
            let Some(after) = steps[c].apply(state) else { continue };
            placed[c / 64] |= 1 << (c % 64);
            if !seen.insert((placed.clone(), after)) {
                placed[c / 64] &= !(1 << (c % 64));
                continue;
            }
            let before = state;
            state = after;
            if c < known {
                placed_known += 1;
                if placed_known == known {
                    return KeyVerdict::Linearizable;
                }
                while first_unplaced < known && is_placed(&placed, first_unplaced) {
                    first_unplaced += 1;
                }
                if placed_known > best {
                    best = placed_known;
                    best_first = first_unplaced;
                }
            }
            let cands = candidates(&placed, first_unplaced);
            stack.push(Frame { cands, next: 0, via: Some((c, before)) });
        } else {
            let Some(frame) = stack.pop() else { break };
            if let Some((c, before)) = frame.via {
                placed[c / 64] &= !(1 << (c % 64));
                state = before;
                if c < known {
                    placed_known -= 1;
                    first_unplaced = first_unplaced.min(c);
                }
            }
        }
    }
    let stuck = order[best_first.min(known - 1)];
    KeyVerdict::Violation { placed: best, of: known, stuck_at: Box::new(ops[stuck].clone()) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn op(client: u64, kind: OpKind, invoke: u64, complete: Option<u64>) -> Op {
        Op { client, key: "k".into(), kind, invoke, complete }
    }
    fn r(v: Option<&str>, a: u64, b: u64) -> Op {
        op(0, OpKind::Read { value: v.map(str::to_string) }, a, Some(b))
    }
    fn w(v: &str, a: u64, b: Option<u64>) -> Op {
        op(1, OpKind::Write { value: v.into() }, a, b)
    }
    fn cas(e: Option<&str>, n: &str, res: Option<bool>, a: u64, b: Option<u64>) -> Op {
        op(2, OpKind::Cas { expected: e.map(str::to_string), new: n.into(), result: res }, a, b)
    }
    fn lin(ops: &[Op]) -> bool {
        match check_key(ops, 1_000_000) {
            KeyVerdict::Linearizable => true,
            KeyVerdict::Violation { .. } => false,
            v @ KeyVerdict::GaveUp { .. } => panic!("gave up: {v:?}"),
        }
    }

    #[test]
    fn sequential_histories() {
        assert!(lin(&[r(None, 0, 1), w("a", 2, Some(3)), r(Some("a"), 4, 5)]));
        assert!(!lin(&[w("a", 0, Some(1)), r(None, 2, 3)]), "a read after a completed write misses it");
        assert!(!lin(&[w("a", 0, Some(1)), w("b", 2, Some(3)), r(Some("a"), 4, 5)]), "stale read");
        assert!(!lin(&[r(Some("x"), 0, 1)]), "a value nobody wrote");
    }

    #[test]
    fn concurrent_operations_may_take_either_order() {
        // The read overlaps the write: both the old and the new value are fine.
        assert!(lin(&[w("a", 0, Some(10)), r(None, 1, 2)]));
        assert!(lin(&[w("a", 0, Some(10)), r(Some("a"), 1, 2)]));
        // Two overlapping reads see new then old: the old one must come before the write,
        // the new one after; fine while they overlap each other.
        assert!(lin(&[w("a", 0, Some(10)), r(Some("a"), 1, 5), r(None, 2, 6)]));
        // Read of the new value completes before a read of the old one is invoked: not fine.
        assert!(!lin(&[w("a", 0, Some(10)), r(Some("a"), 1, 2), r(None, 3, 4)]));
    }

    #[test]
    fn compare_and_set() {
        assert!(lin(&[w("a", 0, Some(1)), cas(Some("a"), "b", Some(true), 2, Some(3)), r(Some("b"), 4, 5)]));
        assert!(!lin(&[w("a", 0, Some(1)), cas(Some("a"), "b", Some(false), 2, Some(3))]));
        assert!(lin(&[w("a", 0, Some(1)), cas(Some("z"), "b", Some(false), 2, Some(3)), r(Some("a"), 4, 5)]));
        // Two CAS from the same value cannot both succeed.
        assert!(!lin(&[
            w("a", 0, Some(1)),
            cas(Some("a"), "b", Some(true), 2, Some(10)),
            cas(Some("a"), "c", Some(true), 3, Some(11)),
        ]));
        assert!(lin(&[
            w("a", 0, Some(1)),
            cas(Some("a"), "b", Some(true), 2, Some(10)),
            cas(Some("a"), "c", Some(false), 3, Some(11)),
            r(Some("b"), 12, 13),
        ]));
        // From the absent value.
        assert!(lin(&[cas(None, "a", Some(true), 0, Some(1)), r(Some("a"), 2, 3)]));
    }

    #[test]
    fn unknown_operations_may_or_may_not_have_happened() {
        // A timed-out write that a later read observes: it happened.
        assert!(lin(&[w("a", 0, None), r(Some("a"), 50, 51)]));
        // ... or that no read observes: it did not (or not yet).
        assert!(lin(&[w("a", 0, None), r(None, 50, 51)]));
        // But it cannot take effect before its invocation.
        assert!(!lin(&[r(Some("a"), 0, 1), w("a", 5, None)]));
        // Once observed, it cannot be undone: new, then old again is a violation.
        assert!(!lin(&[w("a", 0, None), r(Some("a"), 50, 51), r(None, 60, 61)]));
        // An unknown CAS that swapped, seen by a read.
        assert!(lin(&[w("a", 0, Some(1)), cas(Some("a"), "b", None, 2, None), r(Some("b"), 9, 10)]));
        // An unknown CAS cannot have swapped from a value the register did not hold.
        assert!(!lin(&[w("a", 0, Some(1)), cas(Some("z"), "b", None, 2, None), r(Some("b"), 9, 10)]));
    }

    #[test]
    fn many_keys_are_checked_apart() {
        let mut h = vec![w("a", 0, Some(1)), r(Some("a"), 2, 3)];
        let mut other = w("x", 0, Some(1));
        other.key = "j".into();
        let mut stale = r(None, 2, 3);
        stale.key = "j".into();
        h.push(other);
        h.push(stale);
        let rep = check(&h, 1_000_000);
        assert_eq!(rep.keys["k"], KeyVerdict::Linearizable);
        assert!(matches!(rep.keys["j"], KeyVerdict::Violation { .. }));
        assert_eq!(rep.violations(), 1);
        assert!(!rep.is_linearizable());
    }

    #[test]
    fn a_long_valid_history_with_unknowns_is_checked_quickly() {
        // 3 clients, 3000 operations; every 50th write times out.
        let mut h = Vec::new();
        let mut t = 0u64;
        let mut value: Option<String> = None;
        for i in 0..3000u64 {
            t += 10;
            match i % 3 {
                0 => {
                    let v = format!("v{i}");
                    if i % 50 == 0 {
                        h.push(w(&v, t, None));
                    } else {
                        h.push(w(&v, t, Some(t + 15)));
                    }
                    value = Some(v);
                }
                1 => h.push(r(value.as_deref(), t + 16, t + 18)),
                _ => {
                    let n = format!("c{i}");
                    h.push(cas(value.as_deref(), &n, Some(true), t + 19, Some(t + 20)));
                    value = Some(n);
                }
            }
        }
        assert!(lin(&h));
        // One stale read in the middle breaks it.
        let mut bad = h.clone();
        bad[1501] = r(Some("v0"), bad[1501].invoke, bad[1501].complete.unwrap());
        assert!(!lin(&bad));
    }

    #[test]
    fn unobserved_unknown_writes_do_not_blow_up_the_search() {
        // 24 writes time out at the start, their values never seen: each could take effect
        // anywhere. Then two overlapping writes that the search first places in the wrong
        // order, found out only at the read after them, 1000 times.
        let mut h: Vec<Op> = (0..24).map(|i| w(&format!("lost{i}"), i, None)).collect();
        let mut t = 100u64;
        for i in 0..1000u64 {
            let (b, a) = (format!("b{i}"), format!("a{i}"));
            h.push(w(&b, t, Some(t + 10)));
            h.push(w(&a, t + 1, Some(t + 10)));
            h.push(r(Some(&b), t + 11, t + 12));
            t += 20;
        }
        assert_eq!(check_key(&h, 1_000_000), KeyVerdict::Linearizable);
        // The search over the whole history alone runs out of that budget.
        assert!(matches!(search(&h, 1_000_000), KeyVerdict::GaveUp { .. }));
        // A stale read at the end is still found.
        h.push(r(Some("b0"), t, t + 1));
        assert!(matches!(check_key(&h, 1_000_000), KeyVerdict::Violation { .. }));
    }

    #[test]
    fn an_unobserved_unknown_write_is_still_used_when_needed() {
        // The CAS that returned false needs the register to hold something other than "a"
        // at that time: only the timed-out write (whose value nobody read) makes it so.
        assert!(lin(&[w("a", 0, Some(1)), w("x", 2, None), cas(Some("a"), "b", Some(false), 50, Some(51))]));
        // Without it, a violation.
        assert!(!lin(&[w("a", 0, Some(1)), cas(Some("a"), "b", Some(false), 50, Some(51))]));
        // A chain: a timed-out write of "x", a timed-out CAS x -> y, a read of y.
        assert!(lin(&[
            w("a", 0, Some(1)),
            w("x", 2, None),
            cas(Some("x"), "y", None, 3, None),
            r(Some("y"), 50, 51),
        ]));
    }

    #[test]
    fn the_budget_gives_up_rather_than_guess() {
        let h = [w("a", 0, Some(1)), r(Some("a"), 2, 3), r(None, 4, 5)];
        assert!(matches!(check_key(&h, 2), KeyVerdict::GaveUp { .. }));
    }
}
