// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The lookup stage of a hyperlapse as a stream: looks up the feed's points a window at a time (the next window
/// while the frames of the current one render), drops consecutive duplicates, counts gaps, and hands out frames
/// (stop + camera pose) as soon as their pose is settled (see ``CameraPath/settledCount(of:complete:)``).
///
/// What it holds: the stops found but not yet handed out (about one window and the camera's look-ahead, more when
/// a keyframe lies far ahead) and the positions of the frames so far (a few dozen bytes a frame, for the camera
/// path). Consecutive duplicates are counted as ``PanoramaLookup`` counts them: a point without coverage between
/// two points of the same panorama makes the second a new frame.
struct StopPlanner {
    struct Frame: Sendable {
        var stop: HyperlapseStop
        var camera: CameraPose
        /// Index of the stop's route point in the feed (for progress along the route).
        var point: Int
    }

    let feed: any PanoramaFeed
    let path: CameraPath
    let progress: ProgressHandler?

    private(set) var gaps = 0
    private(set) var duplicatesDropped = 0
    private(set) var pointsLookedUp = 0
    private(set) var attributions: [Attribution] = []
    private var seenAttributions = Set<Attribution>()

    /// Positions of every frame so far (the camera stands where its panorama was taken).
    private var positions: [RoutePoint] = []
    /// Stops not yet handed out with their point indices, from `pending[head]` (frame `handedOut`) on.
    private var pending: [(stop: HyperlapseStop, point: Int)] = []
    /// Poses of the settled frames not yet handed out, from `settledPoses[head]` on.
    private var settledPoses: [CameraPose] = []
    private var head = 0
    private var handedOut = 0
    private var previousID: String?
    private var nextPoint = 0
    private var inFlight: Task<[HyperlapseStop?], any Error>?

    init(feed: any PanoramaFeed, path: CameraPath, progress: ProgressHandler?) {
        self.feed = feed
        self.path = path
        self.progress = progress
    }

    /// The next frame in route order, or nil when the route is done.
    mutating func next() async throws -> Frame? {
        while true {
            if head < settledPoses.count {
                let (stop, point) = pending[head]
                let frame = Frame(stop: stop, camera: settledPoses[head], point: point)
                head += 1
                handedOut += 1
                return frame
            }
            // Everything up to `head` is handed out: drop it (amortised O(1) a frame).
            pending.removeFirst(head)
            settledPoses.removeFirst(head)
            head = 0
            let complete = nextPoint >= feed.pointCount && inFlight == nil
            if complete && pending.isEmpty { return nil }
            if !complete { try await takeWindow() }
            settle(complete: nextPoint >= feed.pointCount && inFlight == nil)
        }
    }

    /// Cancels a lookup still running (after an error elsewhere).
    func cancel() { inFlight?.cancel() }

    /// Waits for the window being looked up (starting it if none is), starts the one after it, and queues the
    /// new stops.
    private mutating func takeWindow() async throws {
        if inFlight == nil { inFlight = startWindow() }
        guard let task = inFlight else { return }
        let found = try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        inFlight = startWindow()
        let first = pointsLookedUp
        pointsLookedUp += found.count
        progress?(ProgressEvent(stage: "lookup", completed: pointsLookedUp, total: feed.pointCount, unit: "points"))
        for (offset, stop) in found.enumerated() {
            guard let stop else { gaps += 1; previousID = nil; continue }
            if stop.panoramaID == previousID { duplicatesDropped += 1; continue }
            previousID = stop.panoramaID
            var point = stop.routePoint
            point.coordinate = stop.position
            positions.append(point)
            pending.append((stop, first + offset))
            if let a = stop.attribution, seenAttributions.insert(a).inserted { attributions.append(a) }
        }
    }

    private mutating func startWindow() -> Task<[HyperlapseStop?], any Error>? {
        guard nextPoint < feed.pointCount else { return nil }
        let range = nextPoint..<min(feed.pointCount, nextPoint + max(1, feed.lookupWindow))
        nextPoint = range.upperBound
        let feed = self.feed
        return Task { try await feed.lookup(range) }
    }

    /// Poses of the frames whose pose can no longer change.
    private mutating func settle(complete: Bool) {
        let settled = path.settledCount(of: positions, complete: complete)
        let have = handedOut + settledPoses.count - head
        guard settled > have else { return }
        settledPoses += path.poses(for: positions, in: have..<settled)
    }
}
