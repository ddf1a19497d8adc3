// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// How a hyperlapse is steadied (see ``Stabilizer``).
public struct StabilizationOptions: Sendable, Equatable {
    /// Measure each panorama's orientation from the pictures and fuse it with the source's metadata (default);
    /// off, every panorama is posed as its source says.
    public var enabled = true
    /// The direction of travel in the pictures, degrees right of their centre column (any source), instead of
    /// the one measured from the motion between them. Without stabilisation (``enabled`` false) it still turns
    /// each panorama whose source does not know its heading (``HyperlapseStop/headingUncertainty`` nil: a video,
    /// photos posed by the bearing between them), so that the camera along the road looks `forward` from the
    /// centre column; a heading the source knows (Street View's) is kept.
    public var forward: Double?
    /// Match each frame's tone to a running reference (default on).
    public var toneMatch = true
    /// Frames an orientation waits for before it is final (more: steadier, more memory and latency; default 30).
    public var lag = 30

    /// Options: stabilised or not, the direction of travel given or measured, tone matched or not.
    public init(enabled: Bool = true, forward: Double? = nil, toneMatch: Bool = true) {
        self.enabled = enabled
        self.forward = forward
        self.toneMatch = toneMatch
    }
}

/// How one frame's panorama was posed, for the job file and the report.
public struct FrameOrientation: Sendable, Codable, Equatable {
    /// The panorama's id.
    public var pano: String
    /// The pose the frame was rendered with: compass heading of the centre column, tilt and roll, degrees.
    public var heading: Double
    /// Tilt of the panorama (degrees, 0 level).
    public var tilt: Double
    /// Roll of the panorama (degrees, 0 level).
    public var roll: Double
    /// The heading the source gave (before stabilisation).
    public var sourceHeading: Double
    /// What the pose rests on, joined by "+": `metadata` (the source's heading), `track` (the bearing of the
    /// camera's own track), `positions` (the bearing to the next frame's panorama, for a panorama without a
    /// heading on a planned route), `pixels` (the rotation measured from the previous panorama), `start` (the
    /// first frame's heading as the source or `--pano-heading` gives it), `level` (the source's tilt and roll;
    /// without it the camera is taken to be upright); `neighbours` when none of these: the pose follows from the
    /// frames around it.
    public var from: String
    /// The direction of travel the camera followed, compass degrees.
    public var travel: Double
    /// Tone gains applied to R, G and B (absent when none).
    public var toneGains: [Double]?
    /// The compass heading the frame's camera looked at (the middle of the frame), degrees.
    public var view: Double?
}

/// What the stabilisation of a hyperlapse found. Encoded as the `stabilization` object of `lapse hyperlapse --json`
/// (see `encode(to:)`).
public struct StabilizationReport: Sendable, Equatable, Encodable {
    /// The direction of travel in the pictures (degrees right of the centre column, and above the horizon), as
    /// measured: the median over the pairs where it could be; nil when none could (or `forward` was given).
    public var mountLongitude: Double?
    /// Degrees above the horizon of the direction of travel measured (nil when not measured).
    public var mountLatitude: Double?
    /// The direction of travel given (`--forward`), if any.
    public var forward: Double?
    /// Consecutive pairs whose rotation was measured, and those where it could not be (or disagreed with the
    /// source's metadata and was left out).
    public var pairsMeasured: Int
    /// Consecutive pairs whose rotation could not be measured, or was left out.
    public var pairsUnmeasured: Int
    /// Pairs are every n-th frame's (a video's frames close together; the frames between share the motion).
    public var analysisStride: Int
    /// Frames dropped because the camera had not moved since the last one kept (own photos and videos).
    public var stationaryDropped: Int
    /// The rotation of the view between consecutive frames (degrees: median and 90th percentile), as the
    /// source's metadata alone would have turned it and as rendered; over the pairs whose rotation was measured.
    public var jitterBefore: Percentiles?
    /// The view's rotation between consecutive frames as rendered (degrees; nil when none was measured).
    public var jitterAfter: Percentiles?
    /// Frames whose tone was changed.
    public var toneMatched: Int
    /// What the pairs' votes for a vehicle's axis found (a camera's own track; ``MountEstimator``), whether or not
    /// it was clear enough to follow: nil without votes.
    public var mountVotes: MountEstimator.Estimate?
    /// Times the camera was found moved on its vehicle (the vehicle's axis found anew from there).
    public var mountBreaks = 0
    /// The camera along the road followed that axis (or `forward`): the vehicle's axis, not the track's bearing
    /// (false when no shot of the camera is along the road).
    public var followsVehicleAxis = false

    /// The median and 90th percentile of a set of values.
    public struct Percentiles: Sendable, Equatable, Encodable {
        /// The median (the middle value; the upper one of an even count).
        public var median: Double
        /// The 90th percentile (the value at 90 % of the sorted count).
        public var p90: Double

        init?(_ values: [Double]) {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            median = sorted[sorted.count / 2]
            p90 = sorted[min(sorted.count - 1, sorted.count * 9 / 10)]
        }
    }

    /// The keys: pairsMeasured, pairsUnmeasured, analysisStride, stationaryDropped, toneMatched, travelDirection
    /// (degrees right of the centre column: ``forward`` or ``mountLongitude``; `null` when neither),
    /// travelDirectionGiven, travelElevation (``mountLatitude``), jitterBefore and jitterAfter (median, p90; left
    /// out when not measured), mountVotes (longitude, latitude, spread, margin, consistentShare, agreeing, checked,
    /// deviation, pairs; `null` without votes), mountBreaks, followsVehicleAxis.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: SummaryKey.self)
        try c.encode(pairsMeasured, forKey: "pairsMeasured")
        try c.encode(pairsUnmeasured, forKey: "pairsUnmeasured")
        try c.encode(analysisStride, forKey: "analysisStride")
        try c.encode(stationaryDropped, forKey: "stationaryDropped")
        try c.encode(toneMatched, forKey: "toneMatched")
        try c.encodeNullable(forward ?? mountLongitude, forKey: "travelDirection")
        try c.encode(forward != nil, forKey: "travelDirectionGiven")
        try c.encodeIfPresent(mountLatitude, forKey: "travelElevation")
        try c.encodeIfPresent(jitterBefore, forKey: "jitterBefore")
        try c.encodeIfPresent(jitterAfter, forKey: "jitterAfter")
        if let v = mountVotes {
            var votes = c.nestedContainer(keyedBy: SummaryKey.self, forKey: "mountVotes")
            let (longitude, latitude) = v.longitudeLatitude
            try votes.encode(longitude, forKey: "longitude")
            try votes.encode(latitude, forKey: "latitude")
            try votes.encode(v.spread, forKey: "spread")
            try votes.encode(v.margin, forKey: "margin")
            try votes.encode(v.consistentShare, forKey: "consistentShare")
            try votes.encode(v.agreeing, forKey: "agreeing")
            try votes.encode(v.checked, forKey: "checked")
            try votes.encode(v.deviation, forKey: "deviation")
            try votes.encode(v.pairs, forKey: "pairs")
        } else {
            try c.encodeNil(forKey: "mountVotes")
        }
        try c.encode(mountBreaks, forKey: "mountBreaks")
        try c.encode(followsVehicleAxis, forKey: "followsVehicleAxis")
    }
}

/// The stabilisation stage of a hyperlapse: stops in route order with a small picture of each, out the same
/// stops posed from all the evidence (``OrientationSmoother``), each with the direction of travel its camera
/// follows and a tone correction.
///
/// - Orientation evidence: the rotation from the previous panorama measured from the pictures
///   (``MotionEstimator``; left out where it disagrees with trusted metadata by more than 4σ or 5°), the
///   source's heading where it knows one (``HyperlapseStop/headingUncertainty``), and for a camera's own track
///   (``PanoramaFeed/followsCamera``) the track's bearing (``TrackHeadings``) as the heading of the direction of
///   travel measured in the picture (the one it and the four frames either side agree on); for a panorama of a
///   planned route whose source knows no heading (a Panoramax picture without `view:azimuth`), the bearing to
///   the next frame's panorama as the heading of the direction of travel measured in its picture (`positions`); the
///   level from the source's tilt and roll, else the prior that the camera is upright (3°). The first frame, if
///   nothing else gives its heading, keeps the source's.
/// - Direction of travel: the route's (planned routes) or, for a camera's own track, the measured direction of
///   travel (``PairMotion/travel``, or ``StabilizationOptions/forward``) turned into the world and averaged
///   over ±8 frames.
/// - Stops whose camera did not move since the last one kept (a camera's own track only: no parallax and no
///   turn) are dropped.
/// - Memory: the smoother's lag, the travel windows of small records, one picture.
struct Stabilizer {
    struct Output {
        var stop: HyperlapseStop
        /// The stop as the source gave it.
        var original: HyperlapseStop
        var point: Int
        /// The rotation measured from the previous frame handed out (nil for the first, or when none was).
        var motion: PairMotion?
        var tone: ToneCorrection?
        /// The camera follows the vehicle's axis (``Stabilizer/vehicleAxis``): its heading is the frame's own,
        /// not a mean of the road ahead.
        var followsAxis = false
    }

    let options: StabilizationOptions
    let followsCamera: Bool
    let positionsKnown: Bool
    /// Half the window of the travel average, frames.
    let travelWindow = 8
    /// Half the window of frames whose directions of travel in the pictures, turned into one frame's by the
    /// rotations measured between them, agree on that frame's (a camera's own track).
    let consensusWindow = 4

    private var smoother: OrientationSmoother
    private var toneMatcher = ToneMatcher()
    /// The motion from the last frame kept to the last stationary frame dropped (nil when none was dropped, or
    /// when the chain through them broke: `dropping` tells which).
    private var carried: PairMotion?
    private var dropping = false
    private var started = false
    private var ended = false

    private struct Entry {
        var stop: HyperlapseStop
        var point: Int
        var motion: PairMotion?
        /// Direction of travel towards the next frame in this frame's picture (from the next pair's motion).
        @OptionalStoredAsDoubles var travel: SIMD3<Double>?
        /// One standard deviation of `travel`, degrees.
        var travelUncertainty: Double?
        /// The direction of travel in this frame's picture that it and its neighbours agree on
        /// (``Stabilizer/consensusTravel(_:)``).
        @OptionalStoredAsDoubles var consensus: SIMD3<Double>?
        var tone: ToneCorrection?
        var sources: [String] = []
        var orientation: Rotation?
        @OptionalStoredAsDoubles var worldTravel: SIMD3<Double>?
        /// The track's bearing at this frame (a camera's own track with positions).
        var trackBearing: Double?
        /// The vehicle's axis in this frame's picture, as known when it was posed (``Stabilizer/vehicleAxis``).
        @OptionalStoredAsDoubles var axis: SIMD3<Double>?
    }
    /// Analysed, waiting for the next frame (its travel) and the track ahead.
    private var analysed: [Entry] = []
    /// The latest entries given to the smoother, newest last (at most ``consensusWindow``).
    private var recent: [Entry] = []
    /// Given to the smoother, waiting for its orientation.
    private var smoothing: [Entry] = []
    /// Oriented, waiting for the travel window; `oriented[..<nextOut]` are handed out and kept for the window.
    private var oriented: [Entry] = []
    private var nextOut = 0
    private var outputs: [Output] = []
    /// Positions of the frames from `trackStart` on (the track's window around each frame).
    private var track: [Coordinate] = []
    private var trackStart = 0
    private var framesAdded = 0
    /// Directions of travel in the pictures, for the mount estimate (the latest 500).
    private var travels: [SIMD3<Double>] = []
    /// Every pair's votes for the vehicle's axis in the pictures (``TravelVotes``).
    private var mountVotes = MountEstimator()
    /// What the votes found (kept from ``mountVotes``' last estimate).
    private(set) var mountEstimate: MountEstimator.Estimate?
    /// The votes changed where ``mountEstimate`` is worked out afresh, but it was left until something can read it:
    /// while the first frames wait for fewer pairs than ``mountWindow`` nothing does until a frame is posed
    /// (``release()`` works it out first), and the next pair's votes come with an estimate of their own.
    private var mountEstimateDue = false
    /// Times the camera was found moved on its vehicle (the votes started again), and the pairs measured before the
    /// last such break.
    private(set) var mountBreaks = 0
    private var pairsMeasuredBeforeBreak = 0
    /// A mount was followed since the last break (or the start).
    private var mountFollowed = false
    /// The mount before the last break, for the frames before it (their index below `before`) posed after it.
    private var previousAxis: (before: Int, direction: StoredAsDoubles)?
    /// Each measured pair's turn about the vertical (degrees, right positive), by the frame that ends it: the
    /// latest 60 (a camera's own track with positions).
    private var pairTurns: [(frame: Int, yaw: Double)] = []
    /// Whether the camera turns as its track does (``turnsWithTrack()``), as of the last frame added.
    private var turnsAsTrack: Bool?
    /// The source's heading of the last frame whose heading was kept, with its uncertainty, and the turn measured
    /// since (degrees, right positive, and its variance): nil when a pair since was not measured.
    private struct HeadingReference {
        var heading: Double
        var sigma: Double
        var turn = 0.0
        var turnVariance = 0.0
    }
    private var headingReference: HeadingReference?
    /// Frames whose source heading the turns measured in the pictures contradicted, left out (``checkHeading``), and
    /// the largest disagreement (degrees).
    private(set) var headingsLeftOut = 0
    private var largestHeadingDisagreement = 0.0
    /// Metres from the last frame kept within which a camera whose pictures did not move is standing still (GPS
    /// noise).
    let stationaryDistance = 4.0
    /// Pairs whose votes a camera's own track waits for before its first frames are posed: the mount is found
    /// from many pairs, not the first few.
    let mountWindow = 20

    private(set) var pairsMeasured = 0
    private(set) var pairsUnmeasured = 0
    private(set) var stationaryDropped = 0
    private(set) var toneMatched = 0
    /// Frames of a camera's own track given to the smoother, and those whose direction of travel in the picture
    /// was known (given, the vehicle's axis, or one that two pairs or more agree on).
    private(set) var framesPosed = 0
    private(set) var framesWithTravel = 0

    /// What to tell the user when the camera stood still for half the pictures or more (a tripod, a burst, a long
    /// stop): they are left out; nil otherwise.
    var stationaryWarning: String? {
        let total = framesAdded + stationaryDropped
        guard stationaryDropped > 0, 2 * stationaryDropped >= total else { return nil }
        return """
            \(stationaryDropped) of \(total) panoramas show a camera that did not move since the frame before (nothing \
            in the pictures moved\(positionsKnown ? ", their positions within \(Int(stationaryDistance)) m" : "")): \
            they are left out
            """
    }

    /// What to tell the user when the source's headings of frames were left out because the pictures turned
    /// otherwise (``checkHeading``); nil when none was.
    var headingWarning: String? {
        guard headingsLeftOut > 0 else { return nil }
        let which =
            headingsLeftOut == 1
            ? "the source's heading of 1 frame disagrees"
            : "the source's headings of \(headingsLeftOut) frames disagree"
        return """
            \(which) with the turns measured between the pictures (by up to \
            \(Int(largestHeadingDisagreement.rounded()))°): left out, the pictures' turns followed (a camera that \
            keeps its picture turned to the world, as GoPro's World Lock does, under headings written from the track; \
            or a compass thrown off)
            """
    }

    /// What to tell the user when the pictures did not say where the camera was going (a camera's own track: half
    /// its frames or more without a direction of travel in the picture), with what was measured; nil when they
    /// did, or when `forward` was given.
    var travelWarning: String? {
        guard options.enabled, followsCamera, options.forward == nil, framesPosed >= 2,
            2 * framesWithTravel < framesPosed
        else { return nil }
        var measured = "\(pairsMeasured) of \(pairsMeasured + pairsUnmeasured) pairs measured"
        if let e = mountEstimate {
            let (longitude, latitude) = e.longitudeLatitude
            measured += """
                ; the best guess, \(StabilizationReport.fromCentreColumn(longitude)) and \
                \(StabilizationReport.elevation(latitude)), agreed by \(e.agreeing) of \(e.checked) pairs
                """
        }
        return """
            the direction of travel was not found in the pictures in \(framesPosed - framesWithTravel) of \
            \(framesPosed) frames (\(measured)): those frames look where the source's headings, its positions or \
            single pairs of pictures that no other confirms put the way ahead; if the view does not face the road, \
            give --forward D, the road's direction in degrees right of the pictures' centre column
            """
    }

    init(options: StabilizationOptions, followsCamera: Bool, positionsKnown: Bool) {
        self.options = options
        self.followsCamera = followsCamera
        self.positionsKnown = positionsKnown
        smoother = OrientationSmoother(lag: options.lag)
    }

    /// Whether stops need a picture.
    var needsPictures: Bool { options.enabled }

    /// Adds the next stop (in route order) with its picture (nil when the source could not give one).
    /// - Parameters:
    ///   - stop: the stop, in route order.
    ///   - point: its route point's index.
    ///   - picture: the stop's small picture (nil when the source could not give one).
    ///   - measured: the motion from the previous stop added (kept or not) to this one, measured from their
    ///     pictures (``MotionEstimator``), nil for the first stop or when none could be measured.
    /// - Returns: false when the stop was dropped (its camera had not moved since the last frame kept).
    @discardableResult
    mutating func add(_ stop: HyperlapseStop, point: Int, picture: SphereImage?, motion measured: PairMotion?) -> Bool {
        var stop = stop
        guard options.enabled else {
            var posed = stop
            if let f = options.forward, stop.headingUncertainty == nil {
                posed.pose.heading = ((stop.pose.heading - f).truncatingRemainder(dividingBy: 360) + 360)
                    .truncatingRemainder(dividingBy: 360)
            }
            outputs.append(Output(stop: posed, original: stop, point: point, motion: nil, tone: nil))
            return true
        }
        var motion: PairMotion?
        if started {
            // From the last frame kept: through the stationary frames dropped since.
            motion = carried.map { c in measured.flatMap { c.then($0) } } ?? (dropping ? nil : measured)
            // A stop: nothing in the pictures moved, and (with positions) the camera is within GPS noise (4 m) of the
            // last frame kept; a camera that cannot see the world (windows covered) but whose fixes move on is not
            // standing still.
            let kept = track.last.map { stop.position.distance(to: $0) < stationaryDistance } ?? true
            if let m = motion, followsCamera, m.travel == nil, m.parallax < 0.05, m.rotation.angle < 0.3,
                !positionsKnown || kept
            {
                stationaryDropped += 1 // the camera has not moved: keep the earlier frame as the reference
                carried = m
                dropping = true
                return false
            }
            carried = nil
            dropping = false
            checkHeading(of: &stop, against: &motion)
            // A pair is the picture before and this one (stops between pictures share the motion measured).
            if picture != nil { if motion == nil { pairsUnmeasured += 1 } else { pairsMeasured += 1 } }
            if followsCamera, picture != nil, let votes = measured?.travelVotes {
                mountVotes.add(votes)
                // Afresh with every pair while the first frames wait for it, then every fifth.
                if mountVotes.pairs <= mountWindow || mountVotes.pairs % 5 == 0
                    || mountBreaks > 0 && mountVotes.pairs < 2 * mountWindow
                {
                    if mountVotes.pairs < mountWindow, mountBreaks == 0 {
                        mountEstimateDue = true
                    } else {
                        mountEstimate = mountVotes.estimate
                        mountEstimateDue = false
                    }
                }
                // A camera moved on its vehicle: a mount was followed, and the latest pairs all point elsewhere. The
                // frames not yet posed (the stabiliser holds the latest 20) take the new mount's votes.
                // (Followed: found from as many pairs as the first frames wait for; an estimate from fewer may still
                // be wandering, which is no move.)
                if mountVotes.pairs >= mountWindow, vehicleMount != nil { mountFollowed = true }
                if mountFollowed, let e = mountEstimate, let run = MountEstimator.breakRun(e) {
                    // The frames before the new mount's pairs keep the old one. The votes of the first pairs after the
                    // move lean to the old mount (its parts of the pictures are the ones weighted up), so the move is
                    // placed at the pair a little before them that turned most unlike the track (the camera turned on
                    // its vehicle: 20° or more), if any.
                    var first = framesAdded + 1 - run
                    if let turn = turnUnlikeTrack(from: first - 6, through: first + 1) { first = turn }
                    previousAxis = (before: first, direction: StoredAsDoubles(wrappedValue: e.direction))
                    mountVotes.restart(keeping: run)
                    mountEstimate = mountVotes.estimate
                    mountBreaks += 1
                    mountFollowed = false
                    pairsMeasuredBeforeBreak = pairsMeasured - mountVotes.pairs
                }
            }
            motion?.travelVotes = nil // kept only by the mount's votes
            if followsCamera, positionsKnown, picture != nil, let m = motion {
                pairTurns.append((framesAdded, m.yawPitchRoll.yaw))
                if pairTurns.count > 60 { pairTurns.removeFirst() }
            }
            if let t = motion?.travel, !analysed.isEmpty {
                analysed[analysed.count - 1].travel = t
                analysed[analysed.count - 1].travelUncertainty = motion?.travelUncertainty
                travels.append(t)
                if travels.count > 500 { travels.removeFirst(travels.count - 500) }
            }
        }
        if !started { keepHeadingReference(for: stop, motion: nil) } // the first pair is checked too
        started = true
        var tone: ToneCorrection?
        if options.toneMatch, let picture {
            let t = toneMatcher.correction(ratio: motion?.exposure, means: picture.channelMean)
            if !t.isIdentity {
                tone = t
                toneMatched += 1
            }
        }
        analysed.append(Entry(stop: stop, point: point, motion: motion, tone: tone))
        track.append(stop.position)
        framesAdded += 1
        if followsCamera, positionsKnown { turnsAsTrack = turnsWithTrack() }
        release()
        return true
    }

    /// Checks the source's heading of `stop` against the turn measured since the last frame whose heading was kept
    /// (``headingReference``), by four standard deviations of the difference expected or 5°, whichever is more.
    /// Where they disagree, the weaker is left out: the stop's heading when it is a compass's or a tag's (10° or
    /// looser, at both ends) and the turn was measured firmly (50 or more correspondences agreeing, to within 1°): a
    /// camera that keeps its picture turned to the world (GoPro's World Lock) under headings written from the track,
    /// or a compass thrown off; else the measured motion (two panoramas whose pictures were matched wrongly).
    private mutating func checkHeading(of stop: inout HyperlapseStop, against motion: inout PairMotion?) {
        if let sigma = stop.headingUncertainty, let m = motion, let r = headingReference {
            let expected = angleDifference(from: r.heading, to: stop.pose.heading)
            let variance = r.sigma * r.sigma + sigma * sigma + r.turnVariance + m.uncertainty * m.uncertainty
            let limit = max(5, 4 * variance.squareRoot())
            let difference = abs(angleDifference(from: expected, to: r.turn + m.yawPitchRoll.yaw))
            if difference > limit, min(r.sigma, sigma) >= 10, m.inliers >= 50, m.uncertainty <= 1 {
                stop.headingUncertainty = nil
                headingsLeftOut += 1
                largestHeadingDisagreement = max(largestHeadingDisagreement, difference)
            } else if difference > limit {
                motion = nil
            }
        }
        keepHeadingReference(for: stop, motion: motion)
    }

    /// The reference for the next heading (``headingReference``): `stop`'s heading when it has one (kept), else the
    /// reference so far with `motion`'s turn added, or none when the pair to `stop` was not measured.
    private mutating func keepHeadingReference(for stop: HyperlapseStop, motion: PairMotion?) {
        if let sigma = stop.headingUncertainty {
            headingReference = HeadingReference(heading: stop.pose.heading, sigma: sigma)
        } else if let m = motion {
            headingReference?.turn += m.yawPitchRoll.yaw
            headingReference?.turnVariance += m.uncertainty * m.uncertainty
        } else {
            headingReference = nil
        }
    }

    /// The frame ending the pair, of those ending at frames `from…through`, whose turn differs most from the track's
    /// (``turnsWithTrack()``), when by 20° or more.
    private func turnUnlikeTrack(from low: Int, through high: Int) -> Int? {
        var best: (frame: Int, difference: Double)?
        for p in pairTurns
        where (low...high).contains(p.frame) && p.frame - 1 >= trackStart
            && p.frame - trackStart < track.count
        {
            guard let before = TrackHeadings.heading(at: p.frame - 1 - trackStart, in: track),
                let after = TrackHeadings.heading(at: p.frame - trackStart, in: track)
            else { continue }
            let d = abs(angleDifference(from: angleDifference(from: before, to: after), to: p.yaw))
            if d >= 20, best == nil || d > best!.difference { best = (p.frame, d) }
        }
        return best?.frame
    }

    /// Whether the camera turns as its track does, pair by pair: the median, over the pairs measured (at least 3),
    /// of how far each pair's turn about the vertical differs from the change of the track's bearing
    /// (``TrackHeadings``) between its two frames is 5° or less. A camera fixed to a vehicle turns with it; one
    /// carried by hand, or turned between photos, or one that keeps its pictures fixed to the world (GoPro's World
    /// Lock), does not. Nil with fewer than 3 pairs to compare.
    private func turnsWithTrack() -> Bool? {
        var differences: [Double] = []
        for p in pairTurns where p.frame - 1 >= trackStart && p.frame - trackStart < track.count {
            guard let before = TrackHeadings.heading(at: p.frame - 1 - trackStart, in: track),
                let after = TrackHeadings.heading(at: p.frame - trackStart, in: track)
            else { continue }
            differences.append(abs(angleDifference(from: angleDifference(from: before, to: after), to: p.yaw)))
        }
        guard differences.count >= 3 else { return nil }
        return differences.sorted()[differences.count / 2] <= 5
    }

    /// No more stops.
    mutating func finish() {
        guard !ended else { return }
        ended = true
        guard options.enabled else { return }
        if mountVotes.pairs > 0 { mountEstimate = mountVotes.estimate } // every pair counted
        mountEstimateDue = false
        release()
        smoother.finish()
        release()
    }

    /// The stops ready, in order.
    mutating func take() -> [Output] {
        defer { outputs.removeAll() }
        return outputs
    }

    /// The vehicle's axis in the pictures of a camera fixed to it, as the pairs' votes find it, when they agree
    /// on one and the camera is fixed to what carries it: a clear peak (``MountEstimator/Estimate/margin`` of
    /// 1.2 or more) near the horizon (within 15°: a road's grade and a mount's tilt), voted for by half the pairs
    /// measured or more (at least 3), half or more of the latest ones agreeing with it on their own; and, with
    /// positions, a camera that turns as its track does (``turnsWithTrack()``).
    var vehicleMount: MountEstimator.Estimate? {
        guard followsCamera, let e = mountEstimate, e.pairs >= 3,
            2 * e.pairs >= pairsMeasured - pairsMeasuredBeforeBreak,
            e.margin >= 1.2,
            abs(e.longitudeLatitude.latitude) <= 15, 2 * e.agreeing >= e.checked
        else { return nil }
        if positionsKnown, turnsAsTrack != true { return nil }
        return e
    }

    /// The direction of travel in the pictures as reported: the vehicle's axis, or for a camera's own track whose
    /// frames had a direction of their own (half of them or more) the mean of those measured; nil when the
    /// pictures did not tell (a warning says so).
    var reportedMount: SIMD3<Double>? {
        if let v = vehicleMount { return v.direction }
        guard !followsCamera || 2 * framesWithTravel >= framesPosed else { return nil }
        return mount
    }

    /// The direction of travel in the pictures: `forward` when given, else the vehicle's axis the pairs' votes
    /// agree on, else the median of those measured.
    var mount: SIMD3<Double>? {
        if let f = options.forward { return Self.direction(longitude: f) }
        if let v = vehicleMount { return v.direction }
        guard !travels.isEmpty else { return nil }
        // A robust mean: the mean, then the mean of those within 30° of it.
        var mean = travels.reduce(SIMD3<Double>.zero, +)
        guard (mean * mean).sum() > 1e-12 else { return nil }
        mean /= (mean * mean).sum().squareRoot()
        let near = travels.filter { ($0 * mean).sum() > cos(30 * .pi / 180) }
        guard !near.isEmpty else { return mean }
        let m = near.reduce(SIMD3<Double>.zero, +)
        return m / (m * m).sum().squareRoot()
    }

    /// Whether the camera is mounted rigidly (a car's dashboard, a helmet): most directions of travel measured in
    /// the pictures lie within 20° of ``mount`` (at least 60 % of 10 or more).
    var mountIsRigid: Bool {
        if vehicleMount != nil { return true }
        guard travels.count >= 10, let m = mount else { return false }
        let near = travels.filter { ($0 * m).sum() > cos(20 * .pi / 180) }.count
        return 10 * near >= 6 * travels.count
    }

    /// The direction of travel in a frame's picture: `forward` when given; the mount's for a rigid mount (the
    /// median of many is steadier than any one); else the one the frame and its neighbours agree on, or the mount's.
    private func travelInPicture(_ e: Entry) -> SIMD3<Double>? {
        if let axis = e.axis { return axis }
        if let f = options.forward { return Self.direction(longitude: f) }
        if mountIsRigid { return mount }
        return e.consensus ?? e.travel ?? mount
    }

    static func direction(longitude: Double) -> SIMD3<Double> {
        SIMD3(sin(longitude * .pi / 180), 0, cos(longitude * .pi / 180))
    }

    // MARK: Stages

    private mutating func release() {
        // The mount's estimate, if left until read, before a frame can be posed (stage 1) or has been (stages 2, 3).
        if mountEstimateDue, ended || framesPosed > 0 || analysed.count > max(consensusWindow, mountWindow) + 1 {
            mountEstimate = mountVotes.estimate
            mountEstimateDue = false
        }
        // 1. Evidence to the smoother: once the next frame gave this one's travel (and, for a camera's own
        //    track, the next four theirs, for the consensus), and the track reaches far enough ahead for its
        //    heading.
        while let entry = analysed.first {
            let hasNext = analysed.count > (followsCamera ? max(consensusWindow, mountWindow) + 1 : 1)
            let trackReady =
                !followsCamera || !positionsKnown
                || track.last.map { $0.distance(to: entry.stop.position) >= 50 } ?? false
            guard ended || (hasNext && trackReady) else { break }
            analysed.removeFirst()
            let index = framesAdded - analysed.count - 1
            var e = entry
            if followsCamera {
                e.axis = vehicleAxis(at: index)
                e.consensus = consensusTravel(entry)
                framesPosed += 1
                if e.consensus != nil || e.axis != nil { framesWithTravel += 1 }
            }
            smoother.add(evidence(for: &e, index: index))
            smoothing.append(e)
            recent.append(entry)
            if recent.count > consensusWindow { recent.removeFirst() }
            // Positions more than the track window behind are not needed any more.
            let keepFrom = max(0, index - 200)
            if keepFrom > trackStart, track.count > 400 {
                track.removeFirst(keepFrom - trackStart)
                trackStart = keepFrom
            }
        }
        // 2. Orientations that became final.
        for r in smoother.takeSettled() {
            var e = smoothing.removeFirst()
            e.orientation = r
            if let v = travelInPicture(e) { e.worldTravel = r * v }
            oriented.append(e)
        }
        // 3. Out, once the travel window around a frame is oriented.
        while nextOut < oriented.count,
            ended && smoothing.isEmpty && analysed.isEmpty || nextOut + travelWindow < oriented.count
        {
            outputs.append(output(nextOut))
            nextOut += 1
            if nextOut > travelWindow {
                oriented.removeFirst(nextOut - travelWindow)
                nextOut = travelWindow
            }
        }
    }

    /// The direction of travel in `e`'s picture that the frames around it agree on: theirs (up to
    /// ``consensusWindow`` either side: the later ones `analysed`'s first, `e` just taken off it; the earlier
    /// ones ``recent``) turned into `e`'s frame by the rotations measured between them (a chain broken where one
    /// was not measured), and of those the mean of the ones within 6° of their medoid (the one nearest all the others).
    /// One pair's focus of expansion is off by a few degrees, now and then by tens (other vehicles, a featureless
    /// stretch); the rotations between frames are good to a tenth of a degree, so their neighbours' outvote it. Nil
    /// when fewer than two frames of the window agree on one.
    private func consensusTravel(_ e: Entry) -> SIMD3<Double>? {
        var candidates: [SIMD3<Double>] = []
        if let t = e.travel { candidates.append(t) }
        // Later frames: frame k+d to frame k is M_{k+1}ᵀ ··· M_{k+d}ᵀ (d_B = M d_A).
        var toHere = Rotation.identity
        for next in analysed.prefix(consensusWindow) {
            guard let m = next.motion else { break }
            toHere = toHere * m.rotation.transposed
            if let t = next.travel { candidates.append(toHere * t) }
        }
        // Earlier frames: frame k−d to frame k is M_k ··· M_{k−d+1}.
        var motion = e.motion
        toHere = .identity
        for before in recent.reversed() {
            guard let m = motion else { break }
            toHere = toHere * m.rotation
            if let t = before.travel { candidates.append(toHere * t) }
            motion = before.motion
        }
        guard !candidates.isEmpty else { return nil }
        func angle(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double { acos(min(1, max(-1, (a * b).sum()))) }
        let medoid = candidates.min { a, b in
            candidates.reduce(0) { $0 + angle(a, $1) } < candidates.reduce(0) { $0 + angle(b, $1) }
        }!
        let agreeing = candidates.filter { angle($0, medoid) < 6 * .pi / 180 }
        // A direction no other pair confirms is no evidence (people moving inside a car, nothing of the world seen).
        guard agreeing.count >= 2 else { return nil }
        let near = agreeing.reduce(SIMD3<Double>.zero, +)
        return near / (near * near).sum().squareRoot()
    }

    private func evidence(for e: inout Entry, index: Int) -> OrientationSmoother.Evidence {
        var headings: [OrientationSmoother.Heading] = []
        if let sigma = e.stop.headingUncertainty {
            headings.append(.init(centre: e.stop.pose.heading, sigma: sigma))
            e.sources.append("metadata")
        }
        if followsCamera, positionsKnown, let bearing = TrackHeadings.heading(at: index - trackStart, in: track) {
            e.trackBearing = bearing
            // The direction of travel in the picture: the one this frame and its neighbours agree on
            // (``consensusTravel(_:)``; a mount's median would add its bias to every frame alike), to about 10°,
            // with outliers left (the focus of expansion of a camera moving forward trades off against its yaw:
            // those more than 25° from the orientation so far are left out). Its fit's own uncertainty is no
            // better guide: trusted by it (three times the information's, 2–10°), four runs of turned photos
            // ended 0.7–2° off, against 0.7–1.3° at 10°; trusted more (3–5°, Huber-weighted beyond 1–1.5σ), the
            // offset grew to 1.5–2°: one sequence's directions of travel share a bias of a degree or two, which
            // a tighter σ only lets through. A measured one is also level with the world, give or take the road's
            // grade: it holds the pitch along the way.
            let axis = options.forward == nil ? e.axis : nil
            if let v = options.forward.map(Self.direction(longitude:)) ?? axis ?? e.consensus
                ?? (mountIsRigid ? mount : nil)
            {
                let given = options.forward != nil
                // One standard deviation (degrees) of the frame's own pair's direction, for the elevation's.
                let measured = given || axis != nil ? nil : e.consensus.map { _ in e.travelUncertainty ?? 10 }
                headings.append(
                    .init(
                        direction: v, heading: bearing, sigma: given ? 5 : 10, gate: given ? nil : 25,
                        elevation: measured == nil && axis == nil ? nil : 0,
                        elevationSigma: axis != nil ? 5 : max(2.5, 3 * (measured ?? 0))))
                e.sources.append("track")
            }
        } else if !followsCamera, positionsKnown, e.stop.headingUncertainty == nil, let v = e.travel,
            index - trackStart + 1 < track.count, case let next = track[index - trackStart + 1],
            e.stop.position.distance(to: next) >= 5
        {
            // A panorama whose source knows no heading on a planned route (a Panoramax picture without
            // view:azimuth): the direction of travel measured in its picture towards the next frame's panorama is
            // the bearing to where that one was taken (their positions a few metres off, hence the spread).
            headings.append(.init(direction: v, heading: e.stop.position.initialBearing(to: next), sigma: 15, gate: 25))
            e.sources.append("positions")
        }
        if index == 0, headings.isEmpty {
            // The source's heading of the first frame: what a video without a track (or --pano-heading) names,
            // held; a placeholder (the bearing to the next photo) where the track will tell, barely trusted.
            let placeholder = followsCamera && positionsKnown && e.stop.headingUncertainty == nil
            headings.append(.init(centre: e.stop.pose.heading, sigma: placeholder ? 90 : 0.1))
            e.sources.append("start")
        }
        if e.motion != nil { e.sources.append("pixels") }
        let level = e.stop.levelUncertainty
        if level != nil { e.sources.append("level") }
        return .init(
            motion: e.motion, headings: headings, tilt: level == nil ? 0 : e.stop.pose.tilt,
            roll: level == nil ? 0 : e.stop.pose.roll, levelSigma: level ?? 3)
    }

    private func output(_ k: Int) -> Output {
        let e = oriented[k]
        let r = e.orientation!
        let (yaw, pitch, roll) = r.yawPitchRoll
        var travel = e.stop.routePoint.heading
        var followsAxis = false
        if let axis = e.axis {
            // A camera fixed to a vehicle: the view stays on the vehicle's axis, where the pictures say it points
            // (a track's bearing lags a turn).
            let w = r * axis
            travel = normalizeDegrees(atan2(w.x, w.z) * 180 / .pi)
            followsAxis = true
        } else if let bearing = e.trackBearing {
            travel = bearing // a camera's own track: the way it went
        } else if followsCamera || options.forward != nil {
            let window = oriented[max(0, k - travelWindow)...min(oriented.count - 1, k + travelWindow)]
            let level = window.compactMap(\.worldTravel).map { SIMD2($0.x, $0.z) }.filter { ($0 * $0).sum() > 1e-6 }
                .map { $0 / ($0 * $0).sum().squareRoot() }
            // A robust mean: the mean, then the mean of those within 25° of it.
            var sum = level.reduce(SIMD2<Double>.zero, +)
            if (sum * sum).sum() > 1e-9 {
                let mean = sum / (sum * sum).sum().squareRoot()
                let near = level.filter { ($0 * mean).sum() > cos(25 * .pi / 180) }
                if !near.isEmpty { sum = near.reduce(SIMD2<Double>.zero, +) }
                travel = normalizeDegrees(atan2(sum.x, sum.y) * 180 / .pi)
            }
        }
        var stop = e.stop
        stop.pose = PanoramaPose(heading: normalizeDegrees(yaw), tilt: pitch, roll: roll)
        stop.routePoint.heading = travel
        // Recorded to 1/10 000 of a degree (the render uses the pose itself).
        func fixed(_ v: Double) -> Double { (v * 10_000).rounded() / 10_000 }
        stop.orientation = FrameOrientation(
            pano: stop.panoramaID, heading: fixed(normalizeDegrees(yaw)), tilt: fixed(pitch), roll: fixed(roll),
            sourceHeading: fixed(e.stop.pose.heading),
            from: e.sources.isEmpty ? "neighbours" : e.sources.joined(separator: "+"),
            travel: fixed(travel), toneGains: e.tone.map { [fixed($0.gains.x), fixed($0.gains.y), fixed($0.gains.z)] })
        return Output(
            stop: stop, original: e.stop, point: e.point, motion: e.motion, tone: e.tone, followsAxis: followsAxis)
    }

    /// The vehicle's axis in the pictures of a camera's own track that a rigid mount keeps in one place: `forward`
    /// when given, else the one the pairs' votes agree on; nil for panoramas along a planned route, or when the
    /// votes agree on none (a camera carried by hand turns about the way it goes).
    var vehicleAxis: SIMD3<Double>? {
        guard followsCamera else { return nil }
        return options.forward.map(Self.direction(longitude:)) ?? vehicleMount?.direction
    }

    /// ``vehicleAxis`` for frame `index`: a frame from before the camera was last moved on its vehicle keeps the
    /// mount it had.
    private func vehicleAxis(at index: Int) -> SIMD3<Double>? {
        if options.forward == nil, let p = previousAxis, index < p.before { return p.direction.wrappedValue }
        return vehicleAxis
    }
}

extension StabilizationReport {
    /// Where a direction lies from the pictures' centre column, `degrees` right of it (any angle), in words:
    /// "178° left of the centre column", "opposite the centre column" (180°), "along the centre column" (0°).
    public static func fromCentreColumn(_ degrees: Double) -> String {
        var d = Int(degrees.rounded()) % 360
        if d > 180 { d -= 360 } else if d <= -180 { d += 360 }
        switch d {
        case 0: return "along the centre column"
        case 180: return "opposite the centre column"
        case 1...: return "\(d)° right of the centre column"
        default: return "\(-d)° left of the centre column"
        }
    }

    /// How far above the horizon a direction lies, `degrees` up (negative: down), in words: "4° up", "2° down",
    /// "level".
    public static func elevation(_ degrees: Double) -> String {
        let d = Int(degrees.rounded())
        return d == 0 ? "level" : d > 0 ? "\(d)° up" : "\(-d)° down"
    }
}
