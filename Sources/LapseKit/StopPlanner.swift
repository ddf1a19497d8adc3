// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The lookup and stabilisation stages of a hyperlapse as a stream: looks up the feed's points a window at a
/// time (the next window while the frames of the current one render), drops consecutive duplicates, counts gaps,
/// fetches a small picture of each stop a few at a time and poses the stops from all the evidence
/// (``Stabilizer``), and hands out frames (stop + camera pose + tone) as soon as their pose is settled (see
/// ``CameraPath/settledCount(of:complete:)``).
///
/// What it holds: the stops found but not yet handed out (about one window, the stabiliser's lag and the camera's
/// look-ahead, more when a keyframe lies far ahead), one small picture, and the positions of the frames so far
/// (a few dozen bytes a frame, for the camera path). Consecutive duplicates are counted as ``PanoramaLookup``
/// counts them: a point without coverage between two points of the same panorama makes the second a new frame.
struct StopPlanner {
    struct Frame: Sendable {
        var stop: HyperlapseStop
        var camera: CameraPose
        /// Index of the stop's route point in the feed (for progress along the route).
        var point: Int
        /// Gains to apply to the rendered frame (tone matching), nil for none.
        var tone: ToneCorrection?
    }

    let feed: any PanoramaFeed
    let path: CameraPath
    /// The path for frames whose camera follows the vehicle's axis (``Stabilizer/Output/followsAxis``): the same
    /// script facing each frame's own heading, not the mean of the road ahead.
    let axisPath: CameraPath
    let progress: ProgressHandler?

    private(set) var gaps = 0
    private(set) var duplicatesDropped = 0
    private(set) var pointsLookedUp = 0
    private(set) var attributions: [Attribution] = []
    /// What every point had, and the panoramas chosen (nil unless asked for).
    private(set) var report: HyperlapseReport?
    private var seenAttributions = Set<Attribution>()

    /// Positions of every frame so far (the camera stands where its panorama was taken), as stabilised and as the
    /// source gave them (for the jitter the source alone would have given).
    private var positions: [RoutePoint] = []
    private var sourcePositions: [RoutePoint] = []
    /// Whether each frame so far follows the vehicle's axis.
    private var followsAxis: [Bool] = []
    /// Frames not yet handed out, from `pending[head]` (frame `handedOut`) on.
    private var pending: [Stabilizer.Output] = []
    /// Poses of the settled frames not yet handed out, from `settledPoses[head]` on, and as the source alone
    /// would have had them.
    private var settledPoses: [CameraPose] = []
    private var sourcePoses: [CameraPose] = []
    private var head = 0
    private var handedOut = 0
    private var filter = LookupFilter()
    private var nextPoint = 0
    private var inFlight: Task<[HyperlapseStop?], any Error>?
    /// Stops looked up, waiting for their picture and the stabiliser.
    private var toAnalyse: [(stop: HyperlapseStop, point: Int)] = []
    private var stabilizer: Stabilizer
    private var analysed = 0
    /// Route points the analysis's progress has reported.
    private var analysisReported = 0
    /// Every stop went through the stabiliser.
    private var stabilized = false
    /// The view's rotation between consecutive frames handed out, as rendered and as the source alone gave it.
    private var jitter: [Double] = []
    private var sourceJitter: [Double] = []
    private var lastViews: (rendered: Rotation, source: Rotation)?
    /// Every frame's orientation, in order.
    private(set) var orientations: [FrameOrientation] = []
    /// Pictures fetched at once.
    private let pictureConcurrency = 6
    /// The last pictured stop's picture, for the motion to the next one.
    private var lastPicture: SphereImage?
    /// Stops analysed so far (for the analysis stride), and those waiting for the next picture.
    private var stopsSeen = 0
    private var heldBack: [(stop: HyperlapseStop, point: Int)] = []
    /// The share of the last motion measured that each stop took.
    private var lastShare: PairMotion?

    init(
        feed: any PanoramaFeed, path: CameraPath, stabilization: StabilizationOptions, progress: ProgressHandler?,
        recordsReport: Bool = false
    ) {
        self.feed = feed
        if recordsReport { report = HyperlapseReport(for: feed) }
        self.path = path
        var ownHeading = path.script
        ownHeading.lookAhead = 0
        axisPath = (try? CameraPath(ownHeading)) ?? path
        self.progress = progress
        var options = stabilization
        if feed.continuousCapture { options.toneMatch = false }
        if feed.analysisRestriction != nil {
            options.enabled = false
            options.toneMatch = false
        }
        stabilizer = Stabilizer(
            options: options, followsCamera: feed.followsCamera, positionsKnown: feed.positionsKnown)
    }

    /// What to tell the user about the direction of travel in the pictures (see ``Stabilizer/travelWarning``).
    var travelWarning: String? { stabilizer.travelWarning }
    /// What to tell the user about a camera that stood still (see ``Stabilizer/stationaryWarning``).
    var stationaryWarning: String? { stabilizer.stationaryWarning }

    /// What to tell the user about source headings the pictures contradicted (see ``Stabilizer/headingWarning``).
    var headingWarning: String? { stabilizer.headingWarning }
    /// What to tell the user when half the points or more of a camera's own track have the panorama of the one
    /// before (own photos are each a point: another photo at the same place, or the same photo again, gives no
    /// frame); nil otherwise.
    var duplicateWarning: String? {
        guard feed.traits.followsCamera, duplicatesDropped > 0, 2 * duplicatesDropped >= pointsLookedUp else {
            return nil
        }
        return """
            \(duplicatesDropped) of \(pointsLookedUp) points have the panorama of the one before (photos at the same \
            position: the same photo again, or taken standing still): they give no frame
            """
    }

    /// What the stabilisation found (nil when it was off).
    var stabilization: StabilizationReport? {
        guard stabilizer.options.enabled else { return nil }
        let mount = stabilizer.options.forward == nil ? stabilizer.reportedMount : nil
        return StabilizationReport(
            mountLongitude: mount.map { atan2($0.x, $0.z) * 180 / .pi },
            mountLatitude: mount.map { asin(min(1, max(-1, -$0.y))) * 180 / .pi },
            forward: stabilizer.options.forward, pairsMeasured: stabilizer.pairsMeasured,
            pairsUnmeasured: stabilizer.pairsUnmeasured, analysisStride: max(1, feed.analysisStride),
            stationaryDropped: stabilizer.stationaryDropped,
            jitterBefore: .init(sourceJitter), jitterAfter: .init(jitter), toneMatched: stabilizer.toneMatched,
            mountVotes: stabilizer.mountEstimate, mountBreaks: stabilizer.mountBreaks,
            followsVehicleAxis: stabilizer.vehicleAxis != nil
                && path.script.shots.contains { shot in
                    guard case .route = shot.mode else { return false }
                    return true
                })
    }

    /// The next frame in route order, or nil when the route is done.
    mutating func next() async throws -> Frame? {
        while true {
            if head < settledPoses.count {
                let output = pending[head]
                let frame = Frame(stop: output.stop, camera: settledPoses[head], point: output.point, tone: output.tone)
                record(output, camera: settledPoses[head], sourceCamera: sourcePoses[head])
                head += 1
                handedOut += 1
                return frame
            }
            // Everything up to `head` is handed out: drop it (amortised O(1) a frame).
            pending.removeFirst(head)
            settledPoses.removeFirst(head)
            sourcePoses.removeFirst(head)
            head = 0
            // Lookups, then pictures and the stabiliser, then (once every stop went through) the last frames.
            let lookedUp = nextPoint >= feed.pointCount && inFlight == nil
            if !toAnalyse.isEmpty {
                try await analyseSome()
            } else if !lookedUp {
                try await takeWindow()
            } else {
                flushHeldBack()
                stabilizer.finish()
                stabilized = true
                reportAnalysis(through: feed.pointCount) // the points after the last panorama: nothing to analyse
            }
            for output in stabilizer.take() { queue(output) }
            if stabilized && pending.isEmpty { return nil }
            settle(complete: stabilized)
        }
    }

    /// Cancels a lookup still running (after an error elsewhere).
    func cancel() { inFlight?.cancel() }

    /// Waits for the window being looked up (starting it if none is), starts the one after it, and queues the
    /// new stops for analysis.
    private mutating func takeWindow() async throws {
        if inFlight == nil { inFlight = startWindow() }
        guard let task = inFlight else { return }
        let found = try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
        inFlight = startWindow()
        let first = pointsLookedUp
        pointsLookedUp += found.count
        progress?(ProgressEvent(stage: .lookup, completed: pointsLookedUp, total: feed.pointCount, unit: "points"))
        for (offset, stop) in found.enumerated() {
            let point = first + offset
            let status = filter.classify(stop)
            note(point, stop, status)
            switch status {
            case .uncovered: gaps += 1
            case .duplicate: duplicatesDropped += 1
            default:
                guard let stop else { continue }
                toAnalyse.append((stop, point))
                if let a = stop.attribution, seenAttributions.insert(a).inserted { attributions.append(a) }
            }
        }
    }

    /// Records what point `index` had in the report (when one is kept).
    private mutating func note(_ index: Int, _ stop: HyperlapseStop?, _ status: HyperlapseReport.PointStatus) {
        let feed = self.feed // read before the report is mutated in place (exclusive access to self)
        report?.note(index, stop, status, feed: feed)
    }

    /// Marks point `index` in the report (a stop dropped as stationary, a frame left out).
    mutating func mark(point index: Int, _ status: HyperlapseReport.PointStatus) { report?.mark(point: index, status) }

    private mutating func startWindow() -> Task<[HyperlapseStop?], any Error>? {
        guard nextPoint < feed.pointCount else { return nil }
        let range = nextPoint..<min(feed.pointCount, nextPoint + max(1, feed.lookupWindow))
        nextPoint = range.upperBound
        let feed = self.feed
        return Task { try await feed.lookup(range) }
    }

    /// Fetches the pictures of the next few stops at once, measures the motions between consecutive ones at once,
    /// and gives the stops to the stabiliser in order. Only the stops the feed analyses are pictured
    /// (``PanoramaFeed/isAnalysed(_:seen:last:)``: every n-th for an analysis stride n, and the route's last);
    /// the stops between share the motion measured across them evenly, and wait for it.
    private mutating func analyseSome() async throws {
        guard stabilizer.needsPictures else {
            for item in toAnalyse { stabilizer.add(item.stop, point: item.point, picture: nil, motion: nil) }
            toAnalyse.removeAll()
            return
        }
        let lookedUp = nextPoint >= feed.pointCount && inFlight == nil
        var batch: [(stop: HyperlapseStop, point: Int, pictured: Bool)] = []
        var pictured = 0
        while pictured < pictureConcurrency, !toAnalyse.isEmpty {
            let item = toAnalyse.removeFirst()
            let isPictured = feed.isAnalysed(item.stop, seen: stopsSeen, last: lookedUp && toAnalyse.isEmpty)
            stopsSeen += 1
            batch.append((item.stop, item.point, isPictured))
            if isPictured { pictured += 1 }
        }
        let chosen = batch.indices.filter { batch[$0].pictured }
        var pictures = [SphereImage?](repeating: nil, count: chosen.count)
        var motions = [PairMotion?](repeating: nil, count: chosen.count)
        let feed = self.feed
        // A picture that cannot be had leaves its stop unmeasured (its frame may still render); cancelling is not
        // such a failure. Each motion is measured as soon as its two pictures are there, while the next pictures
        // are fetched (a video's are decoded one after another).
        enum Step: Sendable {
            case picture(Int, SphereImage?)
            case motion(Int, PairMotion?)
        }
        let estimator = MotionEstimator()
        let first = lastPicture
        try await withThrowingTaskGroup(of: Step.self) { group in
            for (k, i) in chosen.enumerated() {
                let stop = batch[i].stop
                group.addTask {
                    do {
                        return .picture(k, try await feed.analysisPicture(for: stop))
                    } catch let error as LapseError where error.code == .cancelled {
                        throw error
                    } catch is CancellationError {
                        throw CancellationError()
                    } catch {
                        return .picture(k, nil)
                    }
                }
            }
            var received = [Bool](repeating: false, count: chosen.count)
            func measure(_ k: Int) {
                guard k < chosen.count, received[k], k == 0 || received[k - 1] else { return }
                guard let a = k == 0 ? first : pictures[k - 1], let b = pictures[k] else { return }
                group.addTask { .motion(k, estimator.motion(from: a, to: b)) }
            }
            for try await step in group {
                switch step {
                case .picture(let k, let picture):
                    pictures[k] = picture
                    received[k] = true
                    measure(k) // from the one before
                    measure(k + 1) // to the one after, if it came first
                case .motion(let k, let motion):
                    motions[k] = motion
                }
            }
        }
        try Task.checkCancellation()
        if !chosen.isEmpty { lastPicture = pictures.last ?? nil }
        var k = 0
        for item in batch {
            guard item.pictured else {
                heldBack.append((item.stop, item.point))
                continue
            }
            // The stops since the last picture and this one share its motion.
            let steps = heldBack.count + 1
            let share = motions[k].map { $0.fraction(1 / Double(steps)) }
            for held in heldBack { add(held.stop, point: held.point, picture: nil, motion: share) }
            heldBack.removeAll()
            // The pair's votes for the vehicle's axis go with the picture that ends it.
            var own = share
            own?.travelVotes = motions[k]?.travelVotes
            add(item.stop, point: item.point, picture: pictures[k], motion: own)
            lastShare = share
            k += 1
        }
        analysed += batch.count
        if let last = batch.last { reportAnalysis(through: last.point + 1) }
    }

    /// The analysis's progress along the route (as the lookup and the render count), the panoramas analysed as the
    /// detail; once per point reached, and only once anything was analysed.
    private mutating func reportAnalysis(through points: Int) {
        guard analysed > 0, points > analysisReported else { return }
        analysisReported = points
        progress?(
            ProgressEvent(
                stage: .analyse, completed: points, total: feed.pointCount, unit: feed.pointUnit,
                detail: analysed == 1 ? "1 panorama" : "\(analysed) panoramas"))
    }

    /// Stops still waiting for a picture when the route ends: they keep turning as the last ones measured did.
    private mutating func flushHeldBack() {
        for held in heldBack { add(held.stop, point: held.point, picture: nil, motion: lastShare) }
        heldBack.removeAll()
    }

    /// Gives a stop to the stabiliser; tells the feed of one dropped.
    private mutating func add(_ stop: HyperlapseStop, point: Int, picture: SphereImage?, motion: PairMotion?) {
        if !stabilizer.add(stop, point: point, picture: picture, motion: motion) {
            feed.skip(stop)
            mark(point: point, .stationary)
        }
    }

    private mutating func queue(_ output: Stabilizer.Output) {
        var point = output.stop.routePoint
        point.coordinate = output.stop.position
        positions.append(point)
        var source = output.original.routePoint
        source.coordinate = output.original.position
        sourcePositions.append(source)
        followsAxis.append(output.followsAxis)
        pending.append(output)
    }

    /// Poses of the frames whose pose can no longer change.
    private mutating func settle(complete: Bool) {
        let settled = path.settledCount(of: positions, complete: complete)
        let have = handedOut + settledPoses.count - head
        guard settled > have else { return }
        let poses = path.poses(for: positions, in: have..<settled)
        if followsAxis[have..<settled].contains(true) {
            let own = axisPath.poses(for: positions, in: have..<settled)
            settledPoses += poses.indices.map { followsAxis[have + $0] ? own[$0] : poses[$0] }
        } else {
            settledPoses += poses
        }
        sourcePoses += path.poses(for: sourcePositions, in: have..<settled)
    }

    /// The frame's orientation and the view's rotation since the previous frame (as rendered and as the source
    /// alone would have rendered it), where the rotation between the two panoramas was measured.
    private mutating func record(_ output: Stabilizer.Output, camera: CameraPose, sourceCamera: CameraPose) {
        if var o = output.stop.orientation {
            o.view = (camera.heading * 10_000).rounded() / 10_000
            orientations.append(o)
        }
        // Panorama-from-view rotations.
        func view(_ pose: PanoramaPose, _ c: CameraPose) -> Rotation {
            (Rotation.camera(yaw: pose.heading, pitch: pose.tilt, roll: pose.roll).transposed
                * Rotation.camera(yaw: c.heading, pitch: c.pitch, roll: c.roll))
        }
        let rendered = view(output.stop.pose, camera)
        let source = view(output.original.pose, sourceCamera)
        if let m = output.motion, let last = lastViews {
            jitter.append((rendered.transposed * m.rotation * last.rendered).angle)
            sourceJitter.append((source.transposed * m.rotation * last.source).angle)
        }
        lastViews = (rendered, source)
    }
}

/// Which looked-up points give frames: a point without a panorama is a gap; the same panorama as the point
/// before, or one a little back in its capture sequence (a point of a noisy track nearest to a photo just before
/// the last one; a long way back is another part of the route, out and back along the same street), a
/// duplicate. A gap between two points of one panorama makes the second a new frame (as ``PanoramaLookup``
/// counts).
struct LookupFilter {
    private var previousID: String?
    private var lastSequenceIndex: Int?

    mutating func classify(_ stop: HyperlapseStop?) -> HyperlapseReport.PointStatus {
        guard let stop else {
            previousID = nil
            return .uncovered
        }
        if stop.panoramaID == previousID { return .duplicate }
        if let k = stop.sequenceIndex, let last = lastSequenceIndex, k < last, last - k <= 30 { return .duplicate }
        previousID = stop.panoramaID
        if let k = stop.sequenceIndex { lastSequenceIndex = k }
        return .panorama
    }
}

extension HyperlapseReport {
    /// Records what point `index` of `feed` had (and, for a new panorama, the panorama).
    mutating func note(_ index: Int, _ stop: HyperlapseStop?, _ status: PointStatus, feed: any PanoramaFeed) {
        let at = stop?.routePoint.coordinate ?? feed.pointCoordinate(index)
        points.append(
            Point(
                index: index, latitude: at?.latitude ?? 0, longitude: at?.longitude ?? 0, status: status,
                pano: stop?.panoramaID, afterJump: feed.isAfterJump(index) ? true : nil))
        if status == .panorama, let stop {
            panoramas.append(
                Panorama(
                    id: stop.panoramaID, latitude: stop.position.latitude, longitude: stop.position.longitude,
                    date: stop.panorama?.date, distance: stop.routePoint.coordinate.distance(to: stop.position),
                    point: index,
                    credit: stop.attribution?.credit))
        }
    }
}
