//! Piecewise-linear trajectories, evaluated lazily at query time.
//!
//! A node's movement is a sorted, gap-free list of legs. Each leg goes in a
//! straight line from `from_m` to `to_m` between `start` and `end` (a pause is a
//! leg with `from_m == to_m`); the last leg is open-ended (`end == SimTime::MAX`)
//! and stationary. No event is ever scheduled to move a node: the channel asks
//! [`Trajectory::position_at`] when it needs a position.
//!
//! Legs store both endpoints and interpolate by the elapsed fraction, then clamp
//! to the segment's bounding box, so a node whose waypoints lie in the area never
//! leaves it through float rounding.

use crate::sim::SimTime;

/// A position in metres, `[x_m, y_m]` (z is ignored throughout, as in the CMU model).
pub type Position = [f64; 2];

/// One straight-line piece of movement (or a pause).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leg {
    /// When the leg starts.
    pub start: SimTime,
    /// When it ends; `SimTime::MAX` for the final, open-ended leg.
    pub end: SimTime,
    /// Position at `start` (m).
    pub from_m: Position,
    /// Position at `end` (m); equal to `from_m` for a pause.
    pub to_m: Position,
    /// The commanded speed (m/s); 0 for a pause. Kept exactly as drawn or read so
    /// that writing an ns-2 file reproduces it rather than a re-derived value.
    pub speed_mps: f64,
}

impl Leg {
    /// Whether the node stands still during this leg.
    pub fn is_pause(&self) -> bool {
        self.from_m == self.to_m
    }

    /// Velocity (m/s) during the leg; zero for pauses and the open final leg.
    pub fn velocity_mps(&self) -> [f64; 2] {
        if self.is_pause() || self.end == SimTime::MAX {
            return [0.0, 0.0];
        }
        let dt_s = (self.end - self.start).as_secs_f64();
        [
            (self.to_m[0] - self.from_m[0]) / dt_s,
            (self.to_m[1] - self.from_m[1]) / dt_s,
        ]
    }

    /// Position at `t`, which must lie in `[start, end]` (clamped otherwise).
    pub fn position_at(&self, t: SimTime) -> Position {
        if self.is_pause() || t <= self.start {
            return self.from_m;
        }
        if t >= self.end {
            return self.to_m;
        }
        let f = (t - self.start).as_secs_f64() / (self.end - self.start).as_secs_f64();
        let lerp = |a: f64, b: f64| (a + f * (b - a)).clamp(a.min(b), a.max(b));
        [
            lerp(self.from_m[0], self.to_m[0]),
            lerp(self.from_m[1], self.to_m[1]),
        ]
    }
}

/// A node's whole movement: legs sorted by time, contiguous, starting at time 0
/// and ending with an open stationary leg.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    legs: Vec<Leg>,
}

impl Trajectory {
    /// A node that never moves.
    pub fn stationary(at_m: Position) -> Trajectory {
        TrajectoryBuilder::new(at_m).finish()
    }

    /// The legs, sorted by start time; `legs()[0].start == 0` and the last leg is open.
    pub fn legs(&self) -> &[Leg] {
        &self.legs
    }

    /// Index of the leg in force at `t` (the last leg whose start ≤ t): O(log legs).
    fn leg_index(&self, t: SimTime) -> usize {
        self.legs
            .partition_point(|l| l.start <= t)
            .saturating_sub(1)
    }

    /// Position (m) at `t`, by binary search over the legs.
    pub fn position_at(&self, t: SimTime) -> Position {
        self.legs[self.leg_index(t)].position_at(t)
    }

    /// Velocity (m/s) at `t` (of the leg starting at or before `t`).
    pub fn velocity_at(&self, t: SimTime) -> [f64; 2] {
        self.legs[self.leg_index(t)].velocity_mps()
    }

    /// Speed (m/s) at `t`: the norm of [`velocity_at`](Self::velocity_at).
    pub fn speed_at(&self, t: SimTime) -> f64 {
        let v = self.velocity_at(t);
        v[0].hypot(v[1])
    }

    /// The first leg boundary strictly after `t`: when the node's velocity next
    /// changes (starts, stops or turns). `None` if it stays still from `t` on.
    /// Two consecutive legs with the same velocity (possible with scripted input)
    /// still count as a change; callers that merely re-evaluate lose nothing.
    pub fn next_change_after(&self, t: SimTime) -> Option<SimTime> {
        let end = self.legs[self.leg_index(t)].end;
        (end != SimTime::MAX).then_some(end)
    }

    /// A cursor for monotone (non-decreasing) queries: amortised O(1) per query.
    pub fn cursor(&self) -> TrajectoryCursor<'_> {
        TrajectoryCursor {
            trajectory: self,
            index: 0,
        }
    }

    /// Total distance travelled (m) in `[0, until]`.
    pub fn distance_m(&self, until: SimTime) -> f64 {
        let mut d = 0.0;
        for leg in &self.legs {
            if leg.start >= until {
                break;
            }
            let a = leg.from_m;
            let b = leg.position_at(until.min(leg.end));
            d += (b[0] - a[0]).hypot(b[1] - a[1]);
        }
        d
    }
}

/// Amortised O(1) position queries for non-decreasing times; falls back to a
/// binary search if asked about an earlier time.
#[derive(Clone, Debug)]
pub struct TrajectoryCursor<'a> {
    trajectory: &'a Trajectory,
    index: usize,
}

impl TrajectoryCursor<'_> {
    pub fn position_at(&mut self, t: SimTime) -> Position {
        let legs = &self.trajectory.legs;
        if t < legs[self.index].start {
            self.index = self.trajectory.leg_index(t);
        }
        while self.index + 1 < legs.len() && legs[self.index + 1].start <= t {
            self.index += 1;
        }
        legs[self.index].position_at(t)
    }
}

/// One node's movement around its last query, copied out of the trajectory with
/// the interval over which one formula holds: a query inside that interval reads
/// only this compact record (no leg search, no second division, no branch on
/// the kind of leg). The channel keeps one per node in a dense array, so a
/// transmission's receivers touch one small record each. Positions are
/// bit-identical to [`Trajectory::position_at`]: the same leg, the same
/// operations in the same order.
///
/// The record is one piece of a leg, always evaluated as `from + f·delta`
/// clamped to `[lo, hi]`, with `f = ((t − start) / 1e9) / span`:
/// * a moving leg strictly inside `(start, end)` (`Leg::position_at`'s own
///   formula), if shorter than 2⁶² ns;
/// * a standing piece (a pause, the open last leg, a moving leg's first
///   nanosecond, or the time from a leg's end to the next leg's start):
///   `delta = −0.0`, `span = 1`, `lo = hi = from`;
///   `f` is finite and ≥ 0, so `f·delta = −0.0` and `from + (−0.0) = from`
///   exactly (even for `from = −0.0`).
///
/// A query outside the record's interval takes the slow path: it refills the
/// record and answers with `Leg::position_at` itself.
#[derive(Clone, Copy, Debug)]
#[repr(align(128))]
pub struct LegCache {
    /// `[valid_from, valid_until)`: the times this record answers for (empty until first filled).
    valid_from: SimTime,
    valid_until: SimTime,
    /// The formula it answers with.
    piece: LegPiece,
}

impl Default for LegCache {
    fn default() -> Self {
        LegCache {
            valid_from: SimTime::MAX,
            valid_until: SimTime::ZERO,
            piece: LegPiece::standing(0, [0.0; 2]),
        }
    }
}

/// `from + f·delta` per coordinate, clamped to `[lo, hi]` as `f64::clamp`
/// does: as two selects (`maxsd`, `minsd`), with lo ≤ hi the same result as
/// `f64::clamp`'s two tests, NaN included.
#[inline(always)]
fn lerp_clamped(from: Position, delta: Position, lo: Position, hi: Position, f: f64) -> Position {
    let lerp = |i: usize| {
        let v = from[i] + f * delta[i];
        let v = if lo[i] > v { lo[i] } else { v };
        if hi[i] < v {
            hi[i]
        } else {
            v
        }
    };
    [lerp(0), lerp(1)]
}

/// A [`LegCache`] record's formula alone (80 bytes, no alignment padding):
/// the channel keeps copies per candidate list, contiguous, and evaluates
/// them only inside the intersection of the originals' intervals.
#[derive(Clone, Copy, Debug)]
pub struct LegPiece {
    /// The time `f` counts from (ns).
    start: u64,
    /// `(end − start)` in seconds, as `Leg::position_at` computes it (1 for a standing piece).
    span_s: f64,
    from_m: Position,
    /// `to − from` (−0.0 for a standing piece), and the segment's bounding box
    /// (the clamp of `Leg::position_at`), per coordinate.
    delta_m: Position,
    lo_m: Position,
    hi_m: Position,
}

impl LegPiece {
    /// A node standing at `at_m` from `start_ns` on (adds −0.0: exactly `at_m`).
    fn standing(start_ns: u64, at_m: Position) -> LegPiece {
        LegPiece {
            start: start_ns,
            span_s: 1.0,
            from_m: at_m,
            delta_m: [-0.0; 2],
            lo_m: at_m,
            hi_m: at_m,
        }
    }

    /// Position at `t`, which lies in the interval of the record this piece
    /// came from (else meaningless): [`LegCache::cached_position_at`]'s
    /// operations on the same values.
    #[inline]
    pub fn position(&self, t: SimTime) -> Position {
        let f = (t.0.wrapping_sub(self.start) as i64 as f64 / 1e9) / self.span_s;
        lerp_clamped(self.from_m, self.delta_m, self.lo_m, self.hi_m, f)
    }

    /// [`position`](Self::position) of two pieces: their divisions pair into
    /// packed instructions (per piece the same operations on the same values).
    #[inline]
    pub fn positions2(a: &LegPiece, b: &LegPiece, t: SimTime) -> [Position; 2] {
        let e = [
            t.0.wrapping_sub(a.start) as i64 as f64,
            t.0.wrapping_sub(b.start) as i64 as f64,
        ];
        let f = div2(div2(e, [1e9, 1e9]), [a.span_s, b.span_s]);
        [
            lerp_clamped(a.from_m, a.delta_m, a.lo_m, a.hi_m, f[0]),
            lerp_clamped(b.from_m, b.delta_m, b.lo_m, b.hi_m, f[1]),
        ]
    }
}

/// `[a₀ / b₀, a₁ / b₁]` in one packed instruction where there is one (x86-64:
/// SSE2's `divpd`, part of the base instruction set). Each lane is the
/// correctly rounded quotient, bit-identical to the scalar division; the
/// compiler does not pair these on its own. For the channel's per-receiver
/// divisions (positions, delays, powers), which otherwise queue one by one
/// for the divider.
#[inline(always)]
pub(crate) fn div2(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_div_pd, _mm_loadu_pd, _mm_storeu_pd};
        let mut q = [0.0; 2];
        // SAFETY: SSE2 is always present on x86-64; the loads and store are of 2-element arrays.
        unsafe {
            _mm_storeu_pd(
                q.as_mut_ptr(),
                _mm_div_pd(_mm_loadu_pd(a.as_ptr()), _mm_loadu_pd(b.as_ptr())),
            )
        };
        q
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        [a[0] / b[0], a[1] / b[1]]
    }
}

/// Moving pieces count `t − start` in an `i64` (one conversion instruction):
/// legs at least this long (ns) are left to the slow path.
const MAX_FAST_SPAN_NS: u64 = 1 << 62;

impl LegCache {
    /// Forget the cached leg (its trajectory was replaced).
    pub fn clear(&mut self) {
        *self = LegCache::default();
    }

    /// Position of `traj` at `t`; refills the record from the trajectory when `t`
    /// lies outside its interval.
    #[inline]
    pub fn position_at(&mut self, traj: &Trajectory, t: SimTime) -> Position {
        match self.cached_position_at(t) {
            Some(p) => p,
            None => self.refill(traj, t),
        }
    }

    /// Position at `t` from the record alone; `None` when `t` lies outside its
    /// interval (then [`refill`](Self::refill) answers).
    #[inline]
    pub fn cached_position_at(&self, t: SimTime) -> Option<Position> {
        if t < self.valid_from || t >= self.valid_until {
            return None;
        }
        // `Leg::position_at`'s arithmetic with its leg-constant parts read from
        // the record: `a + f·(b − a)`, clamped as `f64::clamp` does. `t − start`
        // is below 2⁶² (see `refill`): the signed conversion is exact and the
        // same value `as_secs_f64` converts.
        Some(self.piece.position(t))
    }

    /// The times this record answers for: `[from, until)` (empty until first filled).
    #[inline]
    pub fn valid(&self) -> (SimTime, SimTime) {
        (self.valid_from, self.valid_until)
    }

    /// The record's formula without its interval: for a copy that a caller
    /// evaluates only at times it has checked against [`valid`](Self::valid).
    #[inline]
    pub fn piece(&self) -> LegPiece {
        self.piece
    }

    /// Fill the record with the piece around `t` (an empty interval for a leg
    /// of 2⁶² ns or more) and answer with the leg itself.
    #[cold]
    #[inline(never)]
    pub fn refill(&mut self, traj: &Trajectory, t: SimTime) -> Position {
        let i = traj.leg_index(t);
        let l = &traj.legs[i];
        let next = traj.legs.get(i + 1).map_or(SimTime::MAX, |n| n.start);
        // `[from, until)` at `at`: `f` counts from `from`, kept within 2⁶² ns of it.
        let stand = |c: &mut LegCache, from: SimTime, until: SimTime, at: Position| {
            let from = if t.0 - from.0 >= MAX_FAST_SPAN_NS {
                t
            } else {
                from
            };
            let until = until.min(SimTime(from.0.saturating_add(MAX_FAST_SPAN_NS)));
            *c = LegCache {
                valid_from: from,
                valid_until: until,
                piece: LegPiece::standing(from.0, at),
            };
        };
        // `legs[0]` starts at 0, so `l.start <= t < next`.
        if l.is_pause() {
            stand(self, l.start, next, l.from_m);
        } else if t <= l.start {
            // Exactly at a moving leg's start: at `from`.
            stand(self, l.start, SimTime(l.start.0 + 1).min(next), l.from_m);
        } else if t >= l.end {
            // After the leg's end (zero-length legs included), until the next leg's start: at `to`.
            stand(self, l.end.max(SimTime(l.start.0 + 1)), next, l.to_m);
        } else if l.end.0 - l.start.0 < MAX_FAST_SPAN_NS {
            let mut p = LegPiece {
                start: l.start.0,
                span_s: (l.end - l.start).as_secs_f64(),
                ..LegPiece::standing(l.start.0, l.from_m)
            };
            for k in 0..2 {
                let (a, b) = (l.from_m[k], l.to_m[k]);
                (p.delta_m[k], p.lo_m[k], p.hi_m[k]) = (b - a, a.min(b), a.max(b));
            }
            *self = LegCache {
                valid_from: SimTime(l.start.0 + 1),
                valid_until: l.end.min(next),
                piece: p,
            };
        } else {
            *self = LegCache::default();
        }
        l.position_at(t)
    }
}

/// Builds a trajectory with ns-2 `setdest` semantics: commands in time order;
/// a new command cuts the current leg short wherever the node then is.
#[derive(Clone, Debug)]
pub struct TrajectoryBuilder {
    legs: Vec<Leg>,
    /// Where the node is once all legs so far are done.
    pos_m: Position,
    /// When the last leg so far ends.
    t: SimTime,
}

impl TrajectoryBuilder {
    /// A node standing at `start_m` from time 0.
    pub fn new(start_m: Position) -> TrajectoryBuilder {
        TrajectoryBuilder {
            legs: Vec::new(),
            pos_m: start_m,
            t: SimTime::ZERO,
        }
    }

    /// When the node would next be free (end of the last leg so far).
    pub fn free_at(&self) -> SimTime {
        self.t
    }

    /// Where the node ends up after the legs so far.
    pub fn position(&self) -> Position {
        self.pos_m
    }

    /// Stand still until `until` (no-op if `until` is not later than the current end).
    pub fn pause_until(&mut self, until: SimTime) {
        if until > self.t {
            self.push(Leg {
                start: self.t,
                end: until,
                from_m: self.pos_m,
                to_m: self.pos_m,
                speed_mps: 0.0,
            });
        }
    }

    /// From the end of the last leg, move straight to `dest_m` at `speed_mps`.
    /// The arrival time is rounded to the nearest nanosecond; a move that would
    /// take under half a nanosecond, or has a non-positive speed, is dropped.
    pub fn move_to(&mut self, dest_m: Position, speed_mps: f64) {
        let dist_m = (dest_m[0] - self.pos_m[0]).hypot(dest_m[1] - self.pos_m[1]);
        if speed_mps.is_nan() || speed_mps.is_infinite() || speed_mps <= 0.0 || dist_m == 0.0 {
            return;
        }
        let dur_ns = (dist_m / speed_mps * 1e9).round();
        if dur_ns < 1.0 {
            // Sub-nanosecond hop: jump (we cannot represent the leg; error < 1 ns·v).
            self.pos_m = dest_m;
            return;
        }
        let end = SimTime(
            self.t
                .0
                .saturating_add(dur_ns.min(u64::MAX as f64 / 2.0) as u64),
        );
        self.push(Leg {
            start: self.t,
            end,
            from_m: self.pos_m,
            to_m: dest_m,
            speed_mps,
        });
    }

    /// ns-2 `$ns_ at t "$node_ setdest x y v"`: at `t` the node leaves from
    /// wherever it is, overriding any movement in progress. Commands must come in
    /// non-decreasing time order (callers sort them stably, as ns-2's scheduler does).
    /// A speed of 0 stops the node where it is.
    pub fn setdest(&mut self, t: SimTime, dest_m: Position, speed_mps: f64) {
        if t < self.t {
            // Cut the movement in progress at t. Legs that start at or after t
            // are dropped (only possible for a leg starting exactly at t).
            while let Some(last) = self.legs.last() {
                if last.start < t {
                    break;
                }
                self.pos_m = last.from_m;
                self.legs.pop();
            }
            if let Some(last) = self.legs.last_mut() {
                if last.end > t {
                    let here = last.position_at(t);
                    last.to_m = here;
                    last.end = t;
                    if last.is_pause() {
                        last.speed_mps = 0.0;
                    }
                    self.pos_m = here;
                }
            }
            self.t = t;
        } else {
            self.pause_until(t);
        }
        self.move_to(dest_m, speed_mps);
    }

    fn push(&mut self, leg: Leg) {
        debug_assert_eq!(leg.start, self.t, "legs must be contiguous");
        self.t = leg.end;
        self.pos_m = leg.to_m;
        self.legs.push(leg);
    }

    /// Close the trajectory with an open stationary leg.
    pub fn finish(mut self) -> Trajectory {
        if let Some(last) = self.legs.last_mut().filter(|l| l.is_pause()) {
            // A final pause simply never ends.
            last.end = SimTime::MAX;
        } else {
            let t = self.t;
            let at = self.pos_m;
            self.legs.push(Leg {
                start: t,
                end: SimTime::MAX,
                from_m: at,
                to_m: at,
                speed_mps: 0.0,
            });
        }
        Trajectory { legs: self.legs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> SimTime {
        SimTime::from_secs_f64(x)
    }

    #[test]
    fn stationary_node_stays_put() {
        let t = Trajectory::stationary([3.0, 4.0]);
        assert_eq!(t.position_at(s(0.0)), [3.0, 4.0]);
        assert_eq!(t.position_at(s(1e6)), [3.0, 4.0]);
        assert_eq!(t.next_change_after(SimTime::ZERO), None);
        assert_eq!(t.speed_at(s(5.0)), 0.0);
    }

    #[test]
    fn move_interpolates_linearly() {
        let mut b = TrajectoryBuilder::new([0.0, 0.0]);
        b.pause_until(s(1.0));
        b.move_to([30.0, 40.0], 10.0); // 50 m at 10 m/s: arrives at 6 s
        let t = b.finish();
        assert_eq!(t.legs().len(), 3);
        assert_eq!(t.position_at(s(0.5)), [0.0, 0.0]);
        let p = t.position_at(s(3.5)); // 25 m along
        assert!((p[0] - 15.0).abs() < 1e-9 && (p[1] - 20.0).abs() < 1e-9);
        assert_eq!(t.position_at(s(6.0)), [30.0, 40.0]);
        assert_eq!(t.position_at(s(100.0)), [30.0, 40.0]);
        assert!((t.speed_at(s(2.0)) - 10.0).abs() < 1e-9);
        assert_eq!(t.next_change_after(s(0.0)), Some(s(1.0)));
        assert_eq!(t.next_change_after(s(1.0)), Some(s(6.0)));
        assert_eq!(t.next_change_after(s(6.0)), None);
        assert!((t.distance_m(s(3.5)) - 25.0).abs() < 1e-9);
    }

    #[test]
    fn setdest_overrides_the_move_in_progress() {
        let mut b = TrajectoryBuilder::new([0.0, 0.0]);
        b.setdest(s(0.0), [100.0, 0.0], 10.0);
        b.setdest(s(5.0), [50.0, 30.0], 10.0); // at 5 s the node is at (50, 0)
        let t = b.finish();
        assert_eq!(t.position_at(s(5.0)), [50.0, 0.0]);
        let p = t.position_at(s(6.5));
        assert!((p[0] - 50.0).abs() < 1e-9 && (p[1] - 15.0).abs() < 1e-9);
        assert_eq!(t.position_at(s(9.0)), [50.0, 30.0]);
        // Speed 0 stops the node where it is.
        let mut b = TrajectoryBuilder::new([0.0, 0.0]);
        b.setdest(s(0.0), [100.0, 0.0], 10.0);
        b.setdest(s(2.0), [0.0, 0.0], 0.0);
        let t = b.finish();
        assert_eq!(t.position_at(s(50.0)), [20.0, 0.0]);
    }

    #[test]
    fn cursor_agrees_with_binary_search() {
        let mut b = TrajectoryBuilder::new([0.0, 0.0]);
        for k in 0..50 {
            let k = k as f64;
            b.move_to([k * 7.0 % 100.0, k * 13.0 % 100.0], 3.0 + k);
            b.pause_until(b.free_at() + crate::sim::SimDuration::from_millis(250));
        }
        let t = b.finish();
        let mut c = t.cursor();
        for i in 0..20_000u64 {
            let q = SimTime(i * 10_000_000);
            assert_eq!(c.position_at(q), t.position_at(q));
        }
        // Going backwards still works.
        assert_eq!(c.position_at(s(1.0)), t.position_at(s(1.0)));
    }

    /// The cached leg gives bit-identical positions, forwards, backwards, exactly
    /// at leg boundaries and across zero-length legs.
    #[test]
    fn leg_cache_agrees_bit_for_bit() {
        let mut b = TrajectoryBuilder::new([1.0, 2.0]);
        for i in 0..40u32 {
            let k = i as f64;
            b.move_to([k * 7.3 % 100.0, k * 13.1 % 90.0], 0.7 + k);
            if i.is_multiple_of(3) {
                b.pause_until(b.free_at() + crate::sim::SimDuration::from_millis(250));
            }
            if i.is_multiple_of(7) {
                b.setdest(b.free_at(), [5.0, 5.0], 1e12); // a (near) jump
            }
        }
        let t = b.finish();
        let mut times: Vec<SimTime> = (0..5_000u64).map(|i| SimTime(i * 37_000_001)).collect();
        times.extend(t.legs().iter().flat_map(|l| {
            [
                l.start,
                SimTime(l.start.0.saturating_sub(1)),
                SimTime(l.start.0 + 1),
            ]
        }));
        times.extend((0..2_000u64).map(|i| SimTime((i * 7_919_000_017) % 200_000_000_000)));
        let mut c = LegCache::default();
        for &q in &times {
            let (a, e) = (c.position_at(&t, q), t.position_at(q));
            assert_eq!(
                (a[0].to_bits(), a[1].to_bits()),
                (e[0].to_bits(), e[1].to_bits()),
                "at {q}"
            );
        }
    }

    /// Standing pieces keep a −0.0 coordinate's sign; very late queries (the
    /// open last leg, more than 2⁶² ns after its start) and legs too long for
    /// the fast path still agree bit for bit.
    #[test]
    fn leg_cache_agrees_on_signed_zeros_and_far_times() {
        let mut b = TrajectoryBuilder::new([-0.0, -0.0]);
        b.pause_until(s(1.0));
        b.move_to([-0.0, 10.0], 5.0);
        b.setdest(s(20.0), [-0.0, 3.0], 1.0);
        b.move_to([0.0, -0.0], 1e-12); // longer than 2⁶² ns
        let t = b.finish();
        assert!(t
            .legs()
            .iter()
            .any(|l| l.end != SimTime::MAX && l.end.0 - l.start.0 >= MAX_FAST_SPAN_NS));
        let mut times = vec![
            SimTime::ZERO,
            s(0.5),
            s(1.0),
            SimTime(s(1.0).0 + 1),
            s(2.0),
            s(3.0),
            s(4.0),
            s(19.0),
            s(20.0),
            s(21.0),
            s(30.0),
        ];
        times.extend(
            [
                1u64 << 62,
                (1 << 62) + 5,
                1 << 63,
                (1 << 63) + 7,
                u64::MAX - 1,
                u64::MAX,
            ]
            .map(SimTime),
        );
        times.extend([s(2.0), SimTime(1 << 63), s(25.0), SimTime(u64::MAX - 3)]);
        let mut c = LegCache::default();
        for &q in &times {
            let (a, e) = (c.position_at(&t, q), t.position_at(q));
            assert_eq!(
                (a[0].to_bits(), a[1].to_bits()),
                (e[0].to_bits(), e[1].to_bits()),
                "at {q}"
            );
        }
    }
}
