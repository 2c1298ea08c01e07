//! The event scheduler: a priority queue ordered by (time, insertion sequence).
//!
//! Equal-time events run in the order they were scheduled, which makes a run a pure
//! function of its inputs. Timers are cancelled by generation counters (lazy
//! deletion): a [`Timer`] hands out a [`TimerToken`] when armed; re-arming or
//! cancelling bumps its generation, and a popped event whose token is stale is
//! ignored by its owner. Cancellation is O(1) and never searches the queue.
//!
//! The queue holds only 16-byte keys, one `u128`: the time (high 64
//! bits), the sequence number (next 40) and the slot of the event's payload in a
//! slab (low 24). Sequence numbers are unique, so the packed word
//! orders exactly as the sequence number alone: the pop order is (time, seq),
//! whatever the slots, and one integer comparison decides it.
//!
//! The smallest key may wait in a one-key front slot: an event scheduled
//! ahead of every pending one (a signal a microsecond away, a SIFS) is taken
//! back out of that slot without touching the rest. The slot only ever holds
//! a key no larger than any other, so the pop order is unchanged.
//!
//! The other keys before `split` (the near side) wait, in a network of
//! [`CALENDAR_OWNERS`] nodes or more, in a calendar of
//! fixed-width time buckets ([`BUCKET_SHIFT`], [`BUCKETS`]: 16.4 µs each,
//! 21 ms in all, from the clock's bucket when the window opened): an
//! insertion is a push on its bucket's unsorted list, a pop the next key of
//! the current bucket, which is sorted when the calendar reaches it (the
//! next non-empty bucket is found in an occupancy bitmap). Neither walks
//! levels that grow with the pending keys, as a heap's do: on a large
//! network (thousands of nodes, hundreds of pending events) a heap's
//! log N was most of the growth of the cost per event. In a smaller network
//! they wait in a 4-ary heap (its few keys in a few cache lines; the
//! calendar spread them over its lists and cost rwp20 4 % more CPU), whose
//! window is the 20 ms from the earliest far key. Keys at or after
//! `split` wait in a 4-ary heap (`far`): timers seconds ahead (routing
//! lifetimes, TCP retransmission, CBR sends). When the near side is empty, a
//! new window opens (the calendar's at the clock, the heap's at the earliest
//! far key) and the far keys before its end move over; if the earliest far
//! key lies beyond the calendar's window it is popped from the far heap
//! itself. Every near key is earlier than every far key, so the smallest
//! pending event key is the front slot's, else the near side's first, else
//! the far heap's.
//!
//! Owned timers (the MAC timers of each node, [`Scheduler::arm_owned`]) are
//! kept out of that queue, in a table of their own indexed by timer (an
//! array in no order beside its smallest key while short, a 4-ary heap while
//! long): each timer (owner × [`OWNER_TIMERS`]) has at most one key there, the same
//! (time, seq) key the event would have had. Re-arming a timer whose arming
//! is still pending moves its key in place, so the replaced arming never
//! pops, where as an event it would have popped stale (a third of the MAC
//! timer events on the 20-node benchmark). A cancellation the owner reports
//! ([`Scheduler::disarm_owned`]) takes the arming out; one it does not stays
//! lazy: the arming pops and its owner finds the token stale. The next
//! event is the smaller of the event side's first key and the owned timers'
//! smallest ([`Scheduler::pop_next`]); the order is still exactly (time, seq).
//!
//! The smallest pending key of all (events and owned timers) is kept exact:
//! an insert can only lower it, a pop or an arming recomputes it from the
//! front slot, the near side's first key or heap tops. [`Scheduler::advance_inline`], asked for most
//! signal events, is then one key comparison.

use super::time::{SimDuration, SimTime};

/// Bits of the packed word that hold the slab slot.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Largest sequence number that fits beside the slot (2⁴⁰ − 1 ≈ 1.1·10¹²).
const MAX_SEQ: u64 = (1 << (64 - SLOT_BITS)) - 1;

/// A queue key: `time << 64 | seq << SLOT_BITS | slot`, one integer
/// comparison for the (time, seq) order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128);

impl Key {
    fn new(time: SimTime, seq: u64, slot: u64) -> Key {
        Key((time.0 as u128) << 64 | (seq << SLOT_BITS | slot) as u128)
    }
    fn time(self) -> u64 {
        (self.0 >> 64) as u64
    }
    fn seq(self) -> u64 {
        self.0 as u64 >> SLOT_BITS
    }
    fn slot(self) -> usize {
        (self.0 as u64 & SLOT_MASK) as usize
    }
}

/// Bucket width of the near calendar: 2¹⁴ ns ≈ 16.4 µs.
const BUCKET_SHIFT: u32 = 14;
/// Buckets of the near calendar (a multiple of 64: one occupancy bit each).
/// The window the near side holds is their span, 1280 · 2¹⁴ ns ≈ 21.0 ms.
const BUCKETS: usize = 1280;
/// Width of the time window the near heap holds after a refill (ns).
const NEAR_WINDOW_NS: u64 = 20_000_000;
/// From this many timer owners (nodes with a MAC) on, the near side is a
/// calendar; below, a heap.
const CALENDAR_OWNERS: usize = 256;

/// The near side: the keys before `split`. In a large network
/// ([`CALENDAR_OWNERS`]) a calendar of fixed-width time buckets over the
/// window: an insertion is a push on its bucket's unsorted list; a pop takes
/// the next key of the current bucket, sorted when the calendar reaches it.
/// No operation walks levels that grow with the number of pending keys, as a
/// heap's do. In a small one a 4-ary heap: its few keys stay in a few cache
/// lines, where the calendar spreads them over its buckets' lists (rwp20: 4 %
/// more CPU with the calendar for 0.3 % more instructions).
///
/// `cur[head..]` holds, ascending, the keys of bucket `at` (keys inserted
/// into it join in order); the buckets after `at` hold the later keys in no
/// order, `occ` marks those not empty, and those before it are empty.
/// `cur[head..]` is empty only when the whole calendar is, so its first key
/// is the smallest: when it is used up the calendar moves on to the next
/// bucket with keys and sorts them. A key inserted before the current bucket
/// (the calendar can be ahead of the clock, over empty buckets) puts the
/// current bucket's keys back and makes its own current.
struct Near {
    /// A calendar (else the heap), for the whole run.
    cal: bool,
    /// 4-ary min-heap (no calendar).
    heap: Vec<Key>,
    cur: Vec<Key>,
    head: usize,
    /// The current bucket (index into `buckets`).
    at: usize,
    /// Bucket number (time >> `BUCKET_SHIFT`) of `buckets[0]`.
    base: u64,
    buckets: Vec<Vec<Key>>,
    occ: [u64; BUCKETS / 64],
    /// Keys in the calendar.
    len: usize,
}

impl Near {
    fn new() -> Near {
        Near {
            cal: false,
            heap: Vec::with_capacity(1024),
            cur: Vec::new(),
            head: 0,
            at: 0,
            base: 0,
            buckets: Vec::new(),
            occ: [0; BUCKETS / 64],
            len: 0,
        }
    }

    /// Make the (empty) near side a calendar.
    fn make_calendar(&mut self) {
        debug_assert!(self.is_empty());
        self.cal = true;
        self.cur = Vec::with_capacity(64);
        self.buckets = (0..BUCKETS).map(|_| Vec::new()).collect();
    }

    #[inline]
    fn is_empty(&self) -> bool {
        if self.cal {
            self.len == 0
        } else {
            self.heap.is_empty()
        }
    }

    fn len(&self) -> usize {
        if self.cal {
            self.len
        } else {
            self.heap.len()
        }
    }

    /// Calendar: take the smallest key out (there is one).
    #[inline]
    fn cal_remove_first(&mut self) {
        self.head += 1;
        self.len -= 1;
        if self.head == self.cur.len() && self.len > 0 {
            self.advance();
        }
    }

    /// Start a window on the empty near side at `now`, the earliest far key
    /// being at `far_first`; returns the window's end (`split`). The heap's
    /// window spans [`NEAR_WINDOW_NS`] from `far_first`; the calendar's the
    /// buckets from `now`'s on (the far keys may lie beyond it: then none moves).
    fn start_window(&mut self, now: u64, far_first: u64) -> u64 {
        debug_assert!(self.is_empty());
        if !self.cal {
            return far_first.saturating_add(NEAR_WINDOW_NS);
        }
        self.base = now >> BUCKET_SHIFT;
        self.at = 0;
        self.cur.clear();
        self.head = 0;
        // Clamped at the end of time (keys at `u64::MAX` then stay far).
        ((u128::from(self.base) + BUCKETS as u128) << BUCKET_SHIFT).min(u128::from(u64::MAX)) as u64
    }

    /// Insert `key` (before the window's end).
    #[inline]
    fn push(&mut self, key: Key) {
        if self.cal {
            self.cal_push(key);
        } else {
            push_heap(&mut self.heap, key);
        }
    }

    /// Calendar: insert `key` (at or after the window's first bucket).
    #[inline]
    fn cal_push(&mut self, key: Key) {
        // The window starts at the clock's bucket: no key is before it.
        let b = ((key.time() >> BUCKET_SHIFT) - self.base) as usize;
        debug_assert!(b < BUCKETS);
        if self.len == 0 {
            self.cur.clear();
            self.head = 0;
            self.cur.push(key);
            self.at = b;
        } else if b < self.at {
            self.rewind(b, key);
        } else if b == self.at {
            // In order among the current keys; new keys are mostly late ones.
            let mut i = self.cur.len();
            while i > self.head && self.cur[i - 1] > key {
                i -= 1;
            }
            self.cur.insert(i, key);
        } else {
            self.buckets[b].push(key);
            self.occ[b / 64] |= 1 << (b % 64);
        }
        self.len += 1;
    }

    /// `key` belongs to bucket `b`, before the current one (which
    /// the calendar reached ahead of time, its earlier buckets being empty):
    /// the current bucket's keys go back to their bucket, and `b` becomes
    /// the current one, with `key` alone.
    #[cold]
    #[inline(never)]
    fn rewind(&mut self, b: usize, key: Key) {
        let a = self.at;
        debug_assert!(self.buckets[a].is_empty());
        self.buckets[a].extend_from_slice(&self.cur[self.head..]);
        self.occ[a / 64] |= 1 << (a % 64);
        self.cur.clear();
        self.head = 0;
        self.cur.push(key);
        self.at = b;
    }

    /// The current bucket is used up and keys are left: move to
    /// the next bucket that has some and sort it.
    #[inline(never)]
    fn advance(&mut self) {
        let from = self.at + 1;
        let mut w = from / 64;
        let mut bits = if from.is_multiple_of(64) {
            self.occ[w]
        } else {
            self.occ[w] & (!0u64 << (from % 64))
        };
        while bits == 0 {
            w += 1;
            bits = self.occ[w];
        }
        let b = w * 64 + bits.trailing_zeros() as usize;
        self.occ[w] &= !(1 << (b % 64));
        self.at = b;
        self.cur.clear();
        self.head = 0;
        std::mem::swap(&mut self.cur, &mut self.buckets[b]);
        self.cur.sort_unstable();
    }

    /// Every key, in no particular order.
    fn iter(&self) -> impl Iterator<Item = Key> + '_ {
        let cur = if self.cal {
            &self.cur[self.head..]
        } else {
            &[]
        };
        self.heap
            .iter()
            .chain(cur)
            .chain(self.buckets.iter().flatten())
            .copied()
    }
}

/// The empty front slot: larger than every real key (a real key's time is
/// below `SimTime::MAX` or its slot below `SLOT_MASK`).
const NO_KEY: Key = Key(u128::MAX);

/// Timers per owner in the owned-timer table ([`Scheduler::arm_owned`]).
pub const OWNER_TIMERS: usize = 4;

/// What [`Scheduler::pop_next`] took: a scheduled event, or the arming of an
/// owned timer (owner, timer index, token).
#[derive(Debug, PartialEq, Eq)]
pub enum Popped<E> {
    Event(E),
    Timer(u32, usize, TimerToken),
}

/// `OwnedTimers::pos` of a timer with no pending arming.
const NO_POS: u32 = u32::MAX;

/// The owned timers switch to a heap above this many pending armings, and
/// back to a flat array below [`OWNED_TO_FLAT`].
const OWNED_TO_HEAP: usize = 32;
const OWNED_TO_FLAT: usize = 16;

/// The owned timers: the pending armings' keys (the key's slot bits are
/// `owner * OWNER_TIMERS + timer`), each timer's index among them (`NO_POS`
/// when none is pending) and its token. A re-arming replaces the timer's key
/// in place, so each timer has at most one key pending; a cancellation takes
/// it out.
///
/// Few timers are pending at a time in a small network (at an arming,
/// rwp20: 6 on average, rwp100: 10; rwp400: 34, rwp1000: 131): then the keys
/// are a flat array in no order, beside its smallest key (`top`). An arming
/// is a store and one comparison with `top` (an arming is twice as frequent
/// as a pop, and a sorted array moved the keys smaller than the new one at
/// each); a pop, or a re-arming or cancellation of the top key, takes the
/// minimum of the few keys left, a branch-free scan. Where many are pending
/// the scans cost more than a heap's walks: above [`OWNED_TO_HEAP`] keys the
/// same array becomes a 4-ary min-heap (an increasing array is one), until
/// fewer than [`OWNED_TO_FLAT`] are left (a heap is an array, its first key
/// the smallest: it is a flat array as it stands).
struct OwnedTimers {
    /// The smallest key, `NO_KEY` when none is pending: read at every pop,
    /// written only when a timer is armed, cancelled or popped.
    top: Key,
    /// The pending keys: in no order, or (`heap`) a 4-ary min-heap.
    list: Vec<Key>,
    heap: bool,
    /// Each timer's index in `list`.
    pos: Vec<u32>,
    tokens: Vec<u32>,
}

impl OwnedTimers {
    fn new(owners: usize) -> OwnedTimers {
        assert!(
            owners * OWNER_TIMERS <= SLOT_MASK as usize,
            "too many timer owners"
        );
        let n = owners * OWNER_TIMERS;
        OwnedTimers {
            top: NO_KEY,
            list: Vec::with_capacity(n),
            heap: false,
            pos: vec![NO_POS; n],
            tokens: vec![0; n],
        }
    }

    #[inline]
    fn top(&self) -> Key {
        self.top
    }

    /// Whether timer `slot` has a pending arming.
    fn is_armed(&self, slot: usize) -> bool {
        self.pos[slot] != NO_POS
    }

    /// The smallest key of the flat array (`NO_KEY` when empty).
    #[inline]
    fn scan(&self) -> Key {
        self.list
            .iter()
            .fold(NO_KEY, |m, &k| min_unpredictable(m, k))
    }

    /// Arm timer `slot` with `key`, replacing its pending arming if any;
    /// returns whether there was one.
    #[inline]
    fn arm(&mut self, slot: usize, key: Key) -> bool {
        let i = self.pos[slot];
        let had = i != NO_POS;
        if self.heap {
            self.heap_arm(slot, key, had);
            return had;
        }
        if had {
            let old = std::mem::replace(&mut self.list[i as usize], key);
            if key < self.top {
                self.top = key;
            } else if old == self.top {
                // The smallest key moved later (keys are unique).
                self.top = self.scan();
            }
        } else {
            self.pos[slot] = self.list.len() as u32;
            self.list.push(key);
            self.top = self.top.min(key);
            if self.list.len() > OWNED_TO_HEAP {
                self.make_heap();
            }
        }
        had
    }

    /// Flat array: take out the key at `i` (the last one fills its place).
    #[inline]
    fn flat_remove(&mut self, i: usize) -> Key {
        let k = self.list.swap_remove(i);
        if let Some(&moved) = self.list.get(i) {
            self.pos[moved.slot()] = i as u32;
        }
        k
    }

    /// Drop timer `slot`'s pending arming, if any.
    #[inline]
    fn disarm(&mut self, slot: usize) {
        let i = self.pos[slot];
        if i == NO_POS {
            return;
        }
        if self.heap {
            self.heap_remove(slot);
            return;
        }
        self.pos[slot] = NO_POS;
        if self.flat_remove(i as usize) == self.top {
            self.top = self.scan();
        }
    }

    /// Take the smallest key out (there is one).
    #[inline(always)]
    fn pop(&mut self) -> Key {
        let top = self.top;
        if self.heap {
            self.heap_remove(top.slot());
            return top;
        }
        let i = std::mem::replace(&mut self.pos[top.slot()], NO_POS);
        self.flat_remove(i as usize);
        self.top = self.scan();
        top
    }

    /// Pending armings.
    fn armed(&self) -> usize {
        self.list.len()
    }

    /// The flat array becomes a heap: increasing order is a heap's.
    #[cold]
    fn make_heap(&mut self) {
        self.list.sort_unstable();
        for (i, k) in self.list.iter().enumerate() {
            self.pos[k.slot()] = i as u32;
        }
        self.heap = true;
    }

    /// Heap: arm `slot` with `key` (replacing its pending key if it `had` one).
    #[inline(never)]
    fn heap_arm(&mut self, slot: usize, key: Key, had: bool) {
        if had {
            let i = self.pos[slot] as usize;
            if key < self.list[i] {
                self.sift_up(i, key);
            } else {
                self.sift_down(i, key);
            }
        } else {
            let n = self.list.len();
            self.list.push(key);
            self.sift_up(n, key);
        }
        self.top = self.list[0];
    }

    /// Heap: take timer `slot`'s key out; below [`OWNED_TO_FLAT`] keys the
    /// heap is the flat array (its top stays the first key).
    #[inline(never)]
    fn heap_remove(&mut self, slot: usize) {
        let i = self.pos[slot] as usize;
        self.pos[slot] = NO_POS;
        let last = self.list.pop().expect("armed timer listed");
        if i < self.list.len() {
            if last < self.list[i] {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
        self.top = self.list.first().copied().unwrap_or(NO_KEY);
        if self.list.len() < OWNED_TO_FLAT {
            self.heap = false;
        }
    }

    /// Heap: put `key` at `i` or above, moving larger parents down.
    fn sift_up(&mut self, mut i: usize, key: Key) {
        let h = &mut self.list[..];
        while i > 0 {
            let parent = (i - 1) / 4;
            let pk = h[parent];
            if pk <= key {
                break;
            }
            h[i] = pk;
            self.pos[pk.slot()] = i as u32;
            i = parent;
        }
        h[i] = key;
        self.pos[key.slot()] = i as u32;
    }

    /// Heap: put `key` at `i` or below, moving smaller children up.
    fn sift_down(&mut self, mut i: usize, key: Key) {
        let h = &mut self.list[..];
        while let Some(m) = smallest_child(h, 4 * i + 1) {
            let mk = h[m];
            if key < mk {
                break;
            }
            h[i] = mk;
            self.pos[mk.slot()] = i as u32;
            i = m;
        }
        h[i] = key;
        self.pos[key.slot()] = i as u32;
    }
}

/// The smaller of two keys, chosen without a jump. Which of two unordered
/// keys is smaller is data, not a pattern: a jump on it mispredicts (in the
/// owned timers' scan, a pop's worth of instructions each time), where two
/// conditional moves cost two instructions. On x86-64 in assembly: LLVM turns
/// a select in a loop back into a jump (its cmov conversion), whatever the
/// `select_unpredictable` hint, once a 128-bit select is split in two.
#[inline(always)]
fn min_unpredictable(a: Key, b: Key) -> Key {
    #[cfg(target_arch = "x86_64")]
    {
        let (mut lo, mut hi) = (a.0 as u64, (a.0 >> 64) as u64);
        let (blo, bhi) = (b.0 as u64, (b.0 >> 64) as u64);
        // SAFETY: register arithmetic only (no memory, stack or flags read after).
        unsafe {
            std::arch::asm!(
                "cmp {blo}, {lo}",
                "mov {t}, {bhi}",
                "sbb {t}, {hi}",
                "cmovb {lo}, {blo}",
                "cmovb {hi}, {bhi}",
                blo = in(reg) blo,
                bhi = in(reg) bhi,
                lo = inout(reg) lo,
                hi = inout(reg) hi,
                t = out(reg) _,
                options(pure, nomem, nostack),
            );
        }
        Key((hi as u128) << 64 | lo as u128)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        a.min(b)
    }
}

/// The smallest of the children `c .. c + 4` of a 4-ary heap node (those
/// that exist), or `None` for a leaf. With all four children: a tournament of
/// two pairs (keys are unique), on an array so that one bounds check covers them.
#[inline(always)]
fn smallest_child(h: &[Key], c: usize) -> Option<usize> {
    let n = h.len();
    if c + 4 <= n {
        let q: &[Key; 4] = h[c..c + 4].try_into().expect("four children");
        let a = usize::from(q[1] < q[0]);
        let b = 2 + usize::from(q[3] < q[2]);
        Some(c + if q[b] < q[a] { b } else { a })
    } else if c < n {
        let mut m = c;
        for j in c + 1..n {
            if h[j] < h[m] {
                m = j;
            }
        }
        Some(m)
    } else {
        None
    }
}

/// A deterministic event queue over events of type `E`.
pub struct Scheduler<E> {
    /// The smallest pending key when it is not in `near` (else `NO_KEY`).
    front: Key,
    /// The smallest event key: `front`, else the near side's first, else the
    /// far heap's (`NO_KEY` when no event is pending). Lowered by every
    /// insert, recomputed after every pop of an event.
    ev_low: Key,
    /// The smallest pending key of all: the smaller of `ev_low` and the owned
    /// timers' top. `advance_inline`, called for most signal events, is one
    /// comparison with it.
    low: Key,
    /// The keys before `split` (but the front slot's): a calendar or a heap.
    near: Near,
    /// 4-ary min-heap of the keys at or after `split`.
    far: Vec<Key>,
    /// Times from here on go to `far` (ns).
    split: u64,
    /// Event payloads by slot; `None` for free slots (listed in `free`).
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    now: SimTime,
    /// Sequence number of the event being executed (or of the last one popped).
    cur_seq: u64,
    /// The `until` of the last `pop_until` (events kept outside the queue obey it too).
    horizon: SimTime,
    next_seq: u64,
    executed: u64,
    /// Events popped from the queue (`executed` also counts those run inline).
    popped: u64,
    /// The owned timers, outside the heaps.
    owned: OwnedTimers,
    /// Owned timers popped.
    timer_pops: u64,
    /// Owned timers re-armed while their previous arming was still pending
    /// (each one a pop saved).
    overwritten: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler {
            front: NO_KEY,
            ev_low: NO_KEY,
            low: NO_KEY,
            near: Near::new(),
            far: Vec::with_capacity(1024),
            split: 0,
            slab: Vec::with_capacity(1024),
            free: Vec::new(),
            now: SimTime::ZERO,
            cur_seq: 0,
            horizon: SimTime::ZERO,
            next_seq: 0,
            executed: 0,
            popped: 0,
            owned: OwnedTimers::new(0),
            timer_pops: 0,
            overwritten: 0,
        }
    }

    /// Make room for the owned timers of `owners` owners (ids `0..owners`);
    /// before any is armed.
    pub fn set_timer_owners(&mut self, owners: usize) {
        assert_eq!(self.owned.armed(), 0, "owned timers armed");
        self.owned = OwnedTimers::new(owners);
        if owners >= CALENDAR_OWNERS && !self.near.cal {
            // Before the first pop: every key is still far (`split` is 0).
            assert!(
                self.near.is_empty() && self.front == NO_KEY,
                "near keys pending"
            );
            self.near.make_calendar();
        }
    }

    /// Arm timer `which` of `owner` for `at`, as an event scheduled now would
    /// be (the next sequence number); its pending arming, if any, is replaced
    /// and will not pop. Pops as [`Popped::Timer`] with `tok`.
    #[inline]
    pub fn arm_owned(&mut self, owner: u32, which: usize, at: SimTime, tok: TimerToken) {
        assert!(
            at >= self.now,
            "timer armed in the past: at {at} < now {}",
            self.now
        );
        let seq = self.reserve_seq();
        self.set_owned(owner, which, at, seq, tok);
    }

    /// [`Scheduler::arm_owned`] with a sequence number from [`Scheduler::reserve_seq`]
    /// (its key must still be pending, [`Scheduler::is_pending_key`]).
    #[inline]
    pub fn arm_owned_reserved(
        &mut self,
        owner: u32,
        which: usize,
        at: SimTime,
        seq: u64,
        tok: TimerToken,
    ) {
        assert!(
            self.is_pending_key(at, seq),
            "reserved timer already due: at {at} seq {seq} < now {} seq {}",
            self.now,
            self.cur_seq
        );
        self.set_owned(owner, which, at, seq, tok);
    }

    #[inline(always)]
    fn set_owned(&mut self, owner: u32, which: usize, at: SimTime, seq: u64, tok: TimerToken) {
        assert!(seq <= MAX_SEQ, "more than 2^40 events scheduled");
        let slot = owner as usize * OWNER_TIMERS + which;
        self.owned.tokens[slot] = tok.0;
        self.overwritten += u64::from(self.owned.arm(slot, Key::new(at, seq, slot as u64)));
        self.low = self.ev_low.min(self.owned.top());
    }

    /// Cancel timer `which` of `owner`: its pending arming, if any, will not
    /// pop (a cancelled arming would pop stale, its handler a no-op).
    #[inline(always)]
    pub fn disarm_owned(&mut self, owner: u32, which: usize) {
        self.owned.disarm(owner as usize * OWNER_TIMERS + which);
        self.low = self.ev_low.min(self.owned.top());
    }

    /// Whether timer `which` of `owner` has a pending arming.
    pub fn owned_is_armed(&self, owner: u32, which: usize) -> bool {
        self.owned.is_armed(owner as usize * OWNER_TIMERS + which)
    }

    /// Owned timers popped, and those re-armed while pending (profiling).
    pub fn timer_counts(&self) -> (u64, u64) {
        (self.timer_pops, self.overwritten)
    }

    /// The time of the event being executed (or of the last one popped).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far (including stale timer events).
    pub fn events_executed(&self) -> u64 {
        self.executed
    }

    /// Number of events popped from the queue (the rest of `events_executed` ran
    /// inline, [`Scheduler::advance_inline`]).
    pub fn heap_pops(&self) -> u64 {
        self.popped
    }

    /// Pending events and owned timer armings.
    pub fn pending(&self) -> usize {
        self.near.len() + self.far.len() + usize::from(self.front != NO_KEY) + self.owned.armed()
    }

    /// The smallest pending key (`NO_KEY` when nothing is pending).
    #[inline]
    fn first(&self) -> Key {
        self.low
    }

    /// Schedule `event` at absolute time `at`. Scheduling in the past is a bug in the caller.
    pub fn schedule_at(&mut self, at: SimTime, event: E) {
        assert!(
            at >= self.now,
            "event scheduled in the past: at {at} < now {}",
            self.now
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(at, seq, event);
    }

    /// Take the sequence number an event scheduled now would get, without
    /// scheduling it. [`Scheduler::schedule_reserved`] can later insert the event
    /// with it, and it then runs exactly where it would have run had it been
    /// scheduled now: an event whose handler turns out to be a no-op need never
    /// be inserted, and the order of all others is unchanged.
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// [`Scheduler::reserve_seq`] `count` times: the first of `count` consecutive numbers.
    pub fn reserve_seqs(&mut self, count: u64) -> u64 {
        let seq = self.next_seq;
        self.next_seq += count;
        seq
    }

    /// Whether an event at (`at`, `seq`) is still to run (after the current one).
    pub fn is_pending_key(&self, at: SimTime, seq: u64) -> bool {
        (at, seq) > (self.now, self.cur_seq)
    }

    /// Insert `event` at `at` with a sequence number from [`Scheduler::reserve_seq`].
    /// Its key must still be ahead of the current event ([`Scheduler::is_pending_key`]).
    pub fn schedule_reserved(&mut self, at: SimTime, seq: u64, event: E) {
        assert!(
            self.is_pending_key(at, seq),
            "reserved event already due: at {at} seq {seq} < now {} seq {}",
            self.now,
            self.cur_seq
        );
        self.insert(at, seq, event);
    }

    /// Run an event kept outside the queue at key (`at`, `seq`) now, if it is the
    /// earliest pending one and within the horizon of the last `pop_until`:
    /// advances the clock as a pop would and returns true. Otherwise returns
    /// false and the caller schedules it (`schedule_reserved`).
    pub fn advance_inline(&mut self, at: SimTime, seq: u64) -> bool {
        debug_assert!(self.is_pending_key(at, seq));
        // `Key::new(at, seq, 0)` sorts before every key at (at, seq); `low`
        // is the smallest pending key.
        if at > self.horizon || self.low < Key::new(at, seq, 0) {
            return false;
        }
        self.now = at;
        self.cur_seq = seq;
        self.executed += 1;
        true
    }

    /// Schedule `event` after `delay` from now.
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        self.schedule_at(self.now + delay, event);
    }

    /// Pop the next event no later than `until`, advancing `now` to its time.
    /// Only for a scheduler with no owned timers armed (else [`Scheduler::pop_next`]).
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        match self.pop_next(until)? {
            (t, Popped::Event(e)) => Some((t, e)),
            (_, Popped::Timer(..)) => panic!("owned timer popped by pop_until: use pop_next"),
        }
    }

    /// Pop the next event or owned timer no later than `until`, advancing
    /// `now` to its time.
    #[inline]
    pub fn pop_next(&mut self, until: SimTime) -> Option<(SimTime, Popped<E>)> {
        // One copy per kind of near side: the heap's has no calendar branch.
        if self.near.cal {
            self.pop_next_in::<true>(until)
        } else {
            self.pop_next_in::<false>(until)
        }
    }

    #[inline(always)]
    fn pop_next_in<const CAL: bool>(&mut self, until: SimTime) -> Option<(SimTime, Popped<E>)> {
        self.horizon = until;
        let near_empty = if CAL {
            self.near.len == 0
        } else {
            self.near.heap.is_empty()
        };
        if self.front == NO_KEY && near_empty {
            // Nothing moves when the far side is empty or beyond `until`:
            // then only an owned timer can be due.
            self.refill(until);
        }
        // A far key here is beyond `until` (else `refill` moved it).
        let ev = self.ev_low;
        let tm = self.owned.top();
        if tm < ev {
            if tm.time() > until.0 {
                return None;
            }
            let slot = self.owned.pop().slot();
            self.low = ev.min(self.owned.top());
            let (o, w) = (slot / OWNER_TIMERS, slot % OWNER_TIMERS);
            let tok = TimerToken(self.owned.tokens[slot]);
            let time = SimTime(tm.time());
            debug_assert!(time >= self.now, "time travel");
            self.now = time;
            self.cur_seq = tm.seq();
            self.executed += 1;
            self.timer_pops += 1;
            return Some((time, Popped::Timer(o as u32, w, tok)));
        }
        if ev == NO_KEY || ev.time() > until.0 {
            return None;
        }
        if self.front != NO_KEY {
            self.front = NO_KEY;
        } else if !CAL {
            remove_top(&mut self.near.heap);
        } else if self.near.len != 0 {
            self.near.cal_remove_first();
        } else {
            // A calendar window that ends before the earliest far key.
            remove_top(&mut self.far);
        }
        let near_first = if CAL {
            self.near.cur.get(self.near.head)
        } else {
            self.near.heap.first()
        };
        self.ev_low = near_first.or(self.far.first()).copied().unwrap_or(NO_KEY);
        self.low = self.ev_low.min(tm);
        let top = ev;
        let event = self.slab[top.slot()].take().expect("live slot");
        self.free.push(top.slot() as u32);
        let time = SimTime(top.time());
        debug_assert!(time >= self.now, "time travel");
        self.now = time;
        self.cur_seq = top.seq();
        self.executed += 1;
        self.popped += 1;
        Some((time, Popped::Event(event)))
    }

    /// Every pending event, in no particular order (end-of-run inspection);
    /// owned timers are not events and are not listed.
    pub fn iter_pending(&self) -> impl Iterator<Item = &E> {
        let front = (self.front != NO_KEY).then_some(self.front);
        front
            .into_iter()
            .chain(self.near.iter())
            .chain(self.far.iter().copied())
            .map(|k| self.slab[k.slot()].as_ref().expect("live slot"))
    }

    /// Time of the next pending event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        let k = self.first();
        (k != NO_KEY).then(|| SimTime(k.time()))
    }

    /// Store `event` in a free slot and push its key.
    fn insert(&mut self, at: SimTime, seq: u64, event: E) {
        assert!(seq <= MAX_SEQ, "more than 2^40 events scheduled");
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = Some(event);
                s as u64
            }
            None => {
                assert!(
                    (self.slab.len() as u64) < SLOT_MASK,
                    "more than 2^24 pending events"
                );
                self.slab.push(Some(event));
                (self.slab.len() - 1) as u64
            }
        };
        let key = Key::new(at, seq, slot);
        self.low = self.low.min(key);
        if at.0 >= self.split {
            self.ev_low = self.ev_low.min(key);
            push_heap(&mut self.far, key);
            return;
        }
        // The new smallest key (keys are unique: `<` is strict; a near key is
        // smaller than every far one) waits in the front slot; whatever was
        // there goes to the near side.
        if key < self.ev_low {
            self.ev_low = key;
            let old = std::mem::replace(&mut self.front, key);
            if old != NO_KEY {
                self.near.push(old);
            }
            return;
        }
        self.near.push(key);
    }

    /// The near side is empty: open a window at the clock and move the far
    /// keys before its end to the calendar. `None` when nothing is pending, or
    /// nothing until `until` (then nothing moves). The earliest far key may
    /// lie beyond the window: it is then popped from the far heap itself.
    #[cold]
    fn refill(&mut self, until: SimTime) -> Option<()> {
        let mut k = *self.far.first()?;
        if k.time() > until.0 {
            return None;
        }
        self.split = self.near.start_window(self.now.0, k.time());
        if self.near.cal && k.time() >= self.split {
            // The window ends before the earliest far key.
            return Some(());
        }
        loop {
            remove_top(&mut self.far);
            self.near.push(k);
            match self.far.first() {
                Some(&next) if next.time() < self.split => k = next,
                _ => return Some(()),
            }
        }
    }

    /// Move the clock forward to `t` (end of run) without executing anything.
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }
}

/// Push `key` on the 4-ary heap `heap`.
fn push_heap(heap: &mut Vec<Key>, key: Key) {
    // Sift up: move parents down into the hole until the key fits.
    let mut i = heap.len();
    heap.push(key);
    while i > 0 {
        let parent = (i - 1) / 4;
        let pk = heap[parent];
        if pk <= key {
            break;
        }
        heap[i] = pk;
        i = parent;
    }
    heap[i] = key;
}

/// Remove the root key of the 4-ary heap `heap`: walk the hole down along the
/// smallest children to a leaf, put the last key there and sift it up (the
/// last key is usually a late one and rarely moves up: one comparison per
/// level saved).
fn remove_top(heap: &mut Vec<Key>) {
    let last = heap.pop().expect("non-empty heap");
    let n = heap.len();
    if n == 0 {
        return;
    }
    let h = &mut heap[..];
    let mut i = 0;
    while let Some(m) = smallest_child(h, 4 * i + 1) {
        h[i] = h[m];
        i = m;
    }
    while i > 0 {
        let parent = (i - 1) / 4;
        if h[parent] <= last {
            break;
        }
        h[i] = h[parent];
        i = parent;
    }
    h[i] = last;
}

/// The identity of one arming of a [`Timer`]; carried inside the timer's event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerToken(pub u32);

/// A cancellable one-shot timer owned by a protocol component.
///
/// The owner schedules an event carrying the token from [`Timer::arm`]; when the
/// event fires it calls [`Timer::fire`], which is true only for the latest arming
/// that has not been cancelled.
#[derive(Clone, Debug, Default)]
pub struct Timer {
    generation: u32,
    expires: Option<SimTime>,
}

impl Timer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Arm (or re-arm) for `at`; any earlier arming becomes stale.
    pub fn arm(&mut self, at: SimTime) -> TimerToken {
        self.generation = self.generation.wrapping_add(1);
        self.expires = Some(at);
        TimerToken(self.generation)
    }

    /// Cancel in O(1): the pending event stays in the heap and is ignored when popped.
    pub fn cancel(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.expires = None;
    }

    pub fn is_armed(&self) -> bool {
        self.expires.is_some()
    }

    pub fn expires(&self) -> Option<SimTime> {
        self.expires
    }

    /// Whether an event carrying `token` would fire (profiling: stale timer events).
    pub fn is_live(&self, token: TimerToken) -> bool {
        self.expires.is_some() && token.0 == self.generation
    }

    /// Called when an event carrying `token` pops: true if this arming is live, and
    /// the timer is then disarmed.
    pub fn fire(&mut self, token: TimerToken) -> bool {
        if self.expires.is_some() && token.0 == self.generation {
            self.expires = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_run_in_insertion_order() {
        let mut s = Scheduler::new();
        for i in 0..100 {
            s.schedule_at(SimTime(5), i);
        }
        let got: Vec<i32> =
            std::iter::from_fn(|| s.pop_until(SimTime::MAX).map(|(_, e)| e)).collect();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn pop_until_stops_at_the_horizon() {
        let mut s = Scheduler::new();
        s.schedule_at(SimTime(10), 'a');
        s.schedule_at(SimTime(20), 'b');
        assert_eq!(s.pop_until(SimTime(15)), Some((SimTime(10), 'a')));
        assert_eq!(s.pop_until(SimTime(15)), None);
        assert_eq!(s.now(), SimTime(10));
        assert_eq!(s.pop_until(SimTime(20)), Some((SimTime(20), 'b')));
    }

    /// The front slot takes the newest smallest key; the heap keeps the rest;
    /// `advance_inline` and `peek_time` see both.
    #[test]
    fn front_slot_keeps_the_order() {
        let mut s = Scheduler::new();
        s.schedule_at(SimTime(10), 'a');
        s.schedule_at(SimTime(5), 'b');
        s.schedule_at(SimTime(7), 'c');
        s.schedule_at(SimTime(5), 'd');
        assert_eq!(s.pending(), 4);
        assert_eq!(s.peek_time(), Some(SimTime(5)));
        let mut all: Vec<char> = s.iter_pending().copied().collect();
        all.sort();
        assert_eq!(all, vec!['a', 'b', 'c', 'd']);
        assert_eq!(s.pop_until(SimTime::MAX), Some((SimTime(5), 'b')));
        let r = s.reserve_seq();
        // 'd' (5, seq 3) is pending before (6, r); (5, r) would run after 'd' too.
        assert!(!s.advance_inline(SimTime(6), r));
        assert_eq!(s.pop_until(SimTime::MAX), Some((SimTime(5), 'd')));
        assert!(s.advance_inline(SimTime(6), r));
        assert_eq!(s.now(), SimTime(6));
        s.schedule_at(SimTime(6), 'e');
        let r2 = s.reserve_seq();
        assert!(!s.advance_inline(SimTime(7), r2), "'e' first");
        let got: Vec<char> =
            std::iter::from_fn(|| s.pop_until(SimTime::MAX).map(|(_, e)| e)).collect();
        assert_eq!(got, vec!['e', 'c', 'a']);
        assert_eq!(s.pending(), 0);
        assert_eq!(s.peek_time(), None);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_panics() {
        let mut s = Scheduler::new();
        s.schedule_at(SimTime(10), ());
        s.pop_until(SimTime::MAX);
        s.schedule_at(SimTime(9), ());
    }

    #[test]
    fn cancelled_and_rearmed_timers_are_stale() {
        let mut t = Timer::new();
        let a = t.arm(SimTime(10));
        let b = t.arm(SimTime(20));
        assert!(!t.fire(a), "re-armed: first token is stale");
        assert!(t.fire(b));
        assert!(!t.fire(b), "fires once");
        let c = t.arm(SimTime(30));
        t.cancel();
        assert!(!t.fire(c));
        assert!(!t.is_armed());
    }

    /// The near side is a calendar from [`CALENDAR_OWNERS`] timer owners on,
    /// a heap below; events scheduled before the first pop are all far.
    #[test]
    fn calendar_from_many_owners_on() {
        let mut small: Scheduler<u32> = Scheduler::new();
        small.schedule_at(SimTime(5), 1);
        small.set_timer_owners(CALENDAR_OWNERS - 1);
        assert!(!small.near.cal);
        let mut large: Scheduler<u32> = Scheduler::new();
        large.schedule_at(SimTime(5), 1);
        large.schedule_at(SimTime(3), 2);
        large.set_timer_owners(CALENDAR_OWNERS);
        assert!(large.near.cal);
        assert_eq!(large.pop_until(SimTime::MAX), Some((SimTime(3), 2)));
        assert_eq!(large.pop_until(SimTime::MAX), Some((SimTime(5), 1)));
    }

    /// The calendar moves ahead of the clock over empty buckets, and comes
    /// back for a key inserted before its current bucket; a window that ends
    /// before the earliest far key pops that key from the far heap.
    #[test]
    fn calendar_rewinds_and_pops_beyond_its_window() {
        let ms = |m: u64| SimTime(m * 1_000_000);
        let mut s = Scheduler::new();
        s.near.make_calendar();
        s.schedule_at(SimTime::ZERO, 'x');
        s.schedule_at(ms(1), 'y');
        assert_eq!(s.pop_until(SimTime::MAX), Some((SimTime::ZERO, 'x')));
        // 'y' alone is left: the calendar is at its bucket, 1 ms ahead.
        assert_eq!(s.near.at, (1_000_000 >> BUCKET_SHIFT) as usize);
        s.schedule_at(SimTime(100_000), 'z'); // front slot
        s.schedule_at(SimTime(200_000), 'w'); // before the current bucket
        assert_eq!(s.near.at, (200_000 >> BUCKET_SHIFT) as usize, "rewound");
        assert_eq!(s.pending(), 3);
        s.schedule_at(ms(30), 'v'); // beyond the window: far
        let got: Vec<(SimTime, char)> = std::iter::from_fn(|| s.pop_until(SimTime::MAX)).collect();
        assert_eq!(
            got,
            vec![
                (SimTime(100_000), 'z'),
                (SimTime(200_000), 'w'),
                (ms(1), 'y'),
                (ms(30), 'v')
            ]
        );
        assert_eq!(s.pending(), 0);
    }

    /// The owned-timer table switches to a heap when it grows and back when
    /// it shrinks, and pops in key order throughout.
    #[test]
    fn owned_timers_switch_between_array_and_heap() {
        let mut s: Scheduler<()> = Scheduler::new();
        s.set_timer_owners(20);
        // Times in a scrambled order, all distinct.
        let times: Vec<u64> = (0..80u64).map(|i| (i * 37) % 80 + 1).collect();
        for (i, &t) in times.iter().enumerate() {
            s.arm_owned(i as u32 / 4, i % 4, SimTime(t), TimerToken(i as u32));
            assert_eq!(
                s.owned.heap,
                i + 1 > OWNED_TO_HEAP,
                "after {} armings",
                i + 1
            );
        }
        // Cancel and re-arm a few while in the heap.
        s.disarm_owned(0, 0);
        s.arm_owned(1, 1, SimTime(200), TimerToken(999));
        let mut last = SimTime::ZERO;
        let mut n = 0;
        let mut was_heap = true;
        while let Some((t, Popped::Timer(o, w, tok))) = s.pop_next(SimTime::MAX) {
            assert!(t > last);
            last = t;
            n += 1;
            if (o, w) == (1, 1) {
                assert_eq!((t, tok), (SimTime(200), TimerToken(999)));
            }
            if !s.owned.heap {
                was_heap = false;
            }
            assert!(was_heap || !s.owned.heap, "back to the array once");
        }
        assert_eq!(n, 79);
        assert!(!s.owned.heap);
    }

    /// Drive `s` with `ops` (delay, operation) beside a reference ordered set:
    /// 0–1 schedule now + delay; 2 reserve a sequence number and schedule the
    /// one reserved before; 3 run an event inline if it is the earliest; else
    /// pop and compare, with `pending`, `peek_time` and `iter_pending`. No key
    /// is (0, 0), as in `owned_timers_match_a_reference_queue`.
    fn drive_against_reference(
        mut s: Scheduler<u64>,
        ops: &[(SimDuration, u8)],
    ) -> Result<(), TestCaseError> {
        use std::collections::BTreeSet;
        let mut reference: BTreeSet<(SimTime, u64)> = BTreeSet::new();
        let mut reserved: Vec<u64> = Vec::new();
        s.reserve_seq();
        // Sets the horizon `advance_inline` obeys.
        prop_assert_eq!(s.pop_until(SimTime::MAX), None);
        for &(delay, op) in ops {
            match op {
                0 | 1 => {
                    let at = s.now() + delay;
                    let seq = s.reserve_seq();
                    s.schedule_reserved(at, seq, seq);
                    reference.insert((at, seq));
                }
                2 => {
                    reserved.push(s.reserve_seq());
                    if reserved.len() > 1 {
                        let r = reserved.remove(0);
                        let at = s.now() + delay + SimDuration(1);
                        s.schedule_reserved(at, r, r);
                        reference.insert((at, r));
                    }
                }
                3 => {
                    let at = s.now() + delay + SimDuration(1);
                    let r = s.reserve_seq();
                    let earliest = reference.first().is_none_or(|&k| k > (at, r));
                    prop_assert_eq!(s.advance_inline(at, r), earliest);
                    if earliest {
                        prop_assert_eq!(s.now(), at);
                    }
                }
                _ => {
                    let want = reference.pop_first();
                    let got = s.pop_until(SimTime::MAX);
                    prop_assert_eq!(got, want);
                    prop_assert_eq!(s.pending(), reference.len());
                    prop_assert_eq!(s.peek_time(), reference.first().map(|k| k.0));
                    let mut all: Vec<u64> = s.iter_pending().copied().collect();
                    all.sort_unstable();
                    let mut want_all: Vec<u64> = reference.iter().map(|k| k.1).collect();
                    want_all.sort_unstable();
                    prop_assert_eq!(all, want_all);
                }
            }
        }
        let rest: Vec<(SimTime, u64)> = std::iter::from_fn(|| s.pop_until(SimTime::MAX)).collect();
        prop_assert_eq!(rest, reference.into_iter().collect::<Vec<_>>());
        Ok(())
    }

    proptest! {
        /// Events pop in non-decreasing time; ties in insertion order; nothing lost.
        #[test]
        fn pops_are_sorted_by_time_then_sequence(times in proptest::collection::vec(0u64..50, 0..300)) {
            let mut s = Scheduler::new();
            for (i, t) in times.iter().enumerate() {
                s.schedule_at(SimTime(*t), i);
            }
            let mut last: Option<(SimTime, usize)> = None;
            let mut n = 0;
            while let Some((t, i)) = s.pop_until(SimTime::MAX) {
                prop_assert_eq!(SimTime(times[i]), t);
                prop_assert_eq!(s.now(), t);
                if let Some((lt, li)) = last {
                    prop_assert!(lt < t || (lt == t && li < i));
                }
                last = Some((t, i));
                n += 1;
            }
            prop_assert_eq!(n, times.len());
        }

        /// Interleaved scheduling (plain and reserved) and popping give exactly the
        /// order of a reference ordered set on (time, seq), including the slot
        /// reuse of the slab.
        #[test]
        fn matches_a_reference_queue(ops in proptest::collection::vec((0u64..30, 0u8..4), 1..400)) {
            use std::collections::BTreeSet;
            let mut s = Scheduler::new();
            let mut reference: BTreeSet<(SimTime, u64)> = BTreeSet::new();
            let mut seq = 0u64;
            let mut reserved: Vec<u64> = Vec::new();
            for (d, op) in ops {
                match op {
                    0 | 1 => {
                        let at = s.now() + SimDuration(d);
                        s.schedule_at(at, seq);
                        reference.insert((at, seq));
                        seq += 1;
                    }
                    2 => {
                        reserved.push(s.reserve_seq());
                        seq += 1;
                        if reserved.len() > 1 {
                            let r = reserved.remove(0);
                            // Reserved in the past of `seq` but for a time ahead of now.
                            let at = s.now() + SimDuration(d + 1);
                            s.schedule_reserved(at, r, r);
                            reference.insert((at, r));
                        }
                    }
                    _ => {
                        let want = reference.pop_first();
                        let got = s.pop_until(SimTime::MAX);
                        prop_assert_eq!(got, want);
                        prop_assert_eq!(s.pending(), reference.len());
                    }
                }
            }
            let rest: Vec<(SimTime, u64)> = std::iter::from_fn(|| s.pop_until(SimTime::MAX)).collect();
            prop_assert_eq!(rest, reference.into_iter().collect::<Vec<_>>());
        }

        /// As `matches_a_reference_queue` with times spread over 0.3 s, so that
        /// keys go to the far heap and come back, plus events run inline
        /// (`advance_inline`) whenever they are the earliest pending (`drive_against_reference`).
        #[test]
        fn matches_a_reference_queue_across_the_split(ops in proptest::collection::vec((0u64..30, 0u8..5, 0u64..1000), 1..500), cal in any::<bool>()) {
            let mut s = Scheduler::new();
            if cal {
                s.near.make_calendar();
            }
            let ops: Vec<(SimDuration, u8)> = ops.into_iter().map(|(d, op, fine)| (SimDuration(d * 10_000_000 + fine), op)).collect();
            drive_against_reference(s, &ops)?;
        }

        /// As `matches_a_reference_queue_across_the_split` with delays on the
        /// near calendar's scale: keys in the same bucket, equal times, later
        /// buckets, keys beyond the window (far) and windows that end before
        /// the earliest far key (`drive_against_reference`).
        #[test]
        fn calendar_matches_a_reference_queue(ops in proptest::collection::vec((0u64..40, 0u8..6, 0u64..100_000), 1..800)) {
            let mut s = Scheduler::new();
            s.near.make_calendar();
            // Mostly within a few buckets; a tenth of the keys 1-40 ms ahead.
            let delay = |d: u64, fine: u64| SimDuration(if d < 36 { fine % (d * 5_000 + 1) } else { (d - 35) * 8_000_000 + fine });
            let ops: Vec<(SimDuration, u8)> = ops.into_iter().map(|(d, op, fine)| (delay(d, fine), op)).collect();
            drive_against_reference(s, &ops)?;
        }

        /// Owned timers mixed with events: pops in (time, seq) order as a
        /// reference set in which re-arming a timer replaces its pending
        /// arming; `advance_inline`, `peek_time` and `pending` see the timers.
        #[test]
        fn owned_timers_match_a_reference_queue(ops in proptest::collection::vec((0u64..30, 0u8..6, 0u64..1000, 0u32..5, 0usize..OWNER_TIMERS), 1..500), cal in any::<bool>()) {
            use std::collections::BTreeMap;
            #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
            enum R { Ev(u64), Tm(u32, usize, u32) }
            let mut s: Scheduler<u64> = Scheduler::new();
            s.set_timer_owners(5);
            if cal {
                s.near.make_calendar();
            }
            let mut reference: BTreeMap<(SimTime, u64), R> = BTreeMap::new();
            let mut armed: BTreeMap<(u32, usize), (SimTime, u64)> = BTreeMap::new();
            let mut tok = 0u32;
            let mut held: Option<(u32, usize, SimTime, u64, u32)> = None;
            // Sequence number 0 at time 0 is not pending before anything ran
            // (`cur_seq` starts at 0): a key reserved by a handler never is that.
            s.reserve_seq();
            prop_assert_eq!(s.pop_until(SimTime::MAX), None);
            for (d, op, fine, o, w) in ops {
                let delay = SimDuration(d * 10_000_000 + fine);
                match op {
                    0 => {
                        let at = s.now() + delay;
                        let seq = s.reserve_seq();
                        s.schedule_reserved(at, seq, seq);
                        reference.insert((at, seq), R::Ev(seq));
                    }
                    1 | 2 => {
                        // Short timers, as the MAC's.
                        let at = s.now() + SimDuration(fine * (1 + d % 3));
                        tok += 1;
                        let seq = s.reserve_seq();
                        if op == 2 && held.is_none() {
                            held = Some((o, w, at, seq, tok));
                            continue;
                        }
                        s.arm_owned_reserved(o, w, at, seq, TimerToken(tok));
                        if let Some(old) = armed.insert((o, w), (at, seq)) {
                            reference.remove(&old);
                        }
                        reference.insert((at, seq), R::Tm(o, w, tok));
                    }
                    3 => {
                        // A held-back arming released later, if still due.
                        if let Some((o, w, at, seq, t)) = held.take() {
                            if s.is_pending_key(at, seq) {
                                s.arm_owned_reserved(o, w, at, seq, TimerToken(t));
                                if let Some(old) = armed.insert((o, w), (at, seq)) {
                                    reference.remove(&old);
                                }
                                reference.insert((at, seq), R::Tm(o, w, t));
                            }
                        }
                    }
                    4 => {
                        let at = s.now() + SimDuration(fine + 1);
                        let r = s.reserve_seq();
                        let earliest = reference.first_key_value().is_none_or(|(&k, _)| k > (at, r));
                        prop_assert_eq!(s.advance_inline(at, r), earliest);
                    }
                    _ => {
                        let want = reference.pop_first();
                        let got = s.pop_next(SimTime::MAX);
                        match (want, got) {
                            (None, None) => {}
                            (Some(((t, _), R::Ev(e))), Some((gt, Popped::Event(g)))) => prop_assert_eq!((t, e), (gt, g)),
                            (Some(((t, _), R::Tm(o, w, k))), Some((gt, Popped::Timer(go, gw, gk)))) => {
                                prop_assert_eq!((t, o, w, k), (gt, go, gw, gk.0));
                                armed.remove(&(o, w));
                            }
                            (a, b) => prop_assert!(false, "want {:?}, got {:?}", a, b.map(|(t, p)| (t, format!("{p:?}")))),
                        }
                        prop_assert_eq!(s.pending(), reference.len());
                        prop_assert_eq!(s.peek_time(), reference.first_key_value().map(|(k, _)| k.0));
                    }
                }
            }
            while let Some((t, p)) = s.pop_next(SimTime::MAX) {
                let ((rt, _), r) = reference.pop_first().expect("reference has it");
                prop_assert_eq!(t, rt);
                match (p, r) {
                    (Popped::Event(e), R::Ev(re)) => prop_assert_eq!(e, re),
                    (Popped::Timer(o, w, k), R::Tm(ro, rw, rk)) => prop_assert_eq!((o, w, k.0), (ro, rw, rk)),
                    (p, r) => prop_assert!(false, "{:?} vs {:?}", p, r),
                }
            }
            prop_assert!(reference.is_empty());
        }

        /// Many owners' timers, re-armed, cancelled and popped: the table
        /// turns into a heap above `OWNED_TO_HEAP` pending armings and back
        /// into a flat array, and pops exactly as a reference ordered set.
        #[test]
        fn owned_timers_with_cancellations_match_a_reference_queue(ops in proptest::collection::vec((0u8..10, 0u64..3000, 0u32..40, 0usize..OWNER_TIMERS), 1..1500)) {
            use std::collections::BTreeMap;
            let mut s: Scheduler<u64> = Scheduler::new();
            s.set_timer_owners(40);
            let mut reference: BTreeMap<(SimTime, u64), (u32, usize, u32)> = BTreeMap::new();
            let mut armed: BTreeMap<(u32, usize), (SimTime, u64)> = BTreeMap::new();
            let mut tok = 0u32;
            prop_assert_eq!(s.pop_until(SimTime::MAX), None);
            for (op, d, o, w) in ops {
                match op {
                    // Mostly armings first (the table grows past the switch), then pops.
                    0..=5 => {
                        let at = s.now() + SimDuration(d);
                        tok += 1;
                        s.arm_owned(o, w, at, TimerToken(tok));
                        let seq = s.next_seq - 1;
                        if let Some(old) = armed.insert((o, w), (at, seq)) {
                            reference.remove(&old);
                        }
                        reference.insert((at, seq), (o, w, tok));
                    }
                    6 => {
                        s.disarm_owned(o, w);
                        if let Some(old) = armed.remove(&(o, w)) {
                            reference.remove(&old);
                        }
                    }
                    _ => {
                        let want = reference.pop_first();
                        let got = s.pop_next(SimTime::MAX);
                        match (want, got) {
                            (None, None) => {}
                            (Some(((t, _), (o, w, k))), Some((gt, Popped::Timer(go, gw, gk)))) => {
                                prop_assert_eq!((t, o, w, k), (gt, go, gw, gk.0));
                                armed.remove(&(o, w));
                            }
                            (a, b) => prop_assert!(false, "want {:?}, got {:?}", a, b.map(|(t, p)| (t, format!("{p:?}")))),
                        }
                    }
                }
                prop_assert_eq!(s.pending(), reference.len());
                prop_assert_eq!(s.peek_time(), reference.first_key_value().map(|(k, _)| k.0));
                for &(o, w) in armed.keys() {
                    prop_assert!(s.owned_is_armed(o, w));
                }
            }
            while let Some((t, p)) = s.pop_next(SimTime::MAX) {
                let ((rt, _), (o, w, k)) = reference.pop_first().expect("reference has it");
                prop_assert_eq!(t, rt);
                match p {
                    Popped::Timer(go, gw, gk) => prop_assert_eq!((go, gw, gk.0), (o, w, k)),
                    Popped::Event(e) => prop_assert!(false, "event {}", e),
                }
            }
            prop_assert!(reference.is_empty());
        }

        /// Events scheduled from inside handlers never run before the current time,
        /// and a cancelled timer never fires, whatever the interleaving.
        #[test]
        fn no_time_travel_and_cancellation_holds(
            ops in proptest::collection::vec((0u64..20, any::<bool>()), 1..200)
        ) {
            #[derive(Debug)]
            enum Ev { Spawn(u64, bool), Fire(usize, TimerToken) }
            let mut s = Scheduler::new();
            let mut timers: Vec<Timer> = Vec::new();
            let mut cancelled_tokens: Vec<(usize, TimerToken)> = Vec::new();
            s.schedule_at(SimTime(0), Ev::Spawn(0, false));
            for (d, c) in &ops {
                s.schedule_at(SimTime(*d), Ev::Spawn(*d, *c));
            }
            let mut fired = 0usize;
            while let Some((t, ev)) = s.pop_until(SimTime::MAX) {
                match ev {
                    Ev::Spawn(d, cancel) => {
                        let mut timer = Timer::new();
                        let tok = timer.arm(t + SimDuration(d));
                        s.schedule_at(t + SimDuration(d), Ev::Fire(timers.len(), tok));
                        if cancel {
                            timer.cancel();
                            cancelled_tokens.push((timers.len(), tok));
                        }
                        timers.push(timer);
                    }
                    Ev::Fire(i, tok) => {
                        let live = timers[i].fire(tok);
                        prop_assert_eq!(live, !cancelled_tokens.contains(&(i, tok)));
                        if live { fired += 1; }
                        prop_assert_eq!(timers[i].expires(), None);
                    }
                }
            }
            prop_assert_eq!(fired + cancelled_tokens.len(), timers.len());
        }
    }
}
