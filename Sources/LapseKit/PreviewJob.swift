// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A hyperlapse's route and lookups only (`lapse preview`): which points have a panorama, which panoramas, the
/// duplicates and gaps — no image or tile is fetched, nothing rendered, so a preview costs only the lookups
/// (Google's `panoIds` and metadata requests, which its terms do not bill as tiles) before any quota or time is
/// spent on the video. Points are classified as the hyperlapse classifies them (duplicates and gaps alike);
/// stationary frames are known only once the pictures are analysed, so a preview shows none.
public struct PreviewJob: Sendable {
    /// A preview job (it has no settings: the feed holds them).
    public init() {}

    /// What the lookups found. Encoded as `lapse preview --json` prints it (``LapseCore/SummaryKey``): source (the
    /// feed's name), distance (metres), routePoints, panoramas, duplicatesDropped, gaps.
    public struct Summary: Sendable, Encodable {
        /// The feed's name.
        public var feed: String
        /// Route length, metres (0 without positions).
        public var distance: Double
        /// Points of the route looked up.
        public var routePoints: Int
        /// What a route point is called in messages (`route points`, `video frames`).
        public var pointUnit: String
        /// Points with a (new) panorama: the frames a hyperlapse would have, before stabilisation drops any.
        public var panoramas: Int
        /// Points whose panorama was the one before (left out).
        public var duplicatesDropped: Int
        /// Points without a panorama within the search radius.
        public var gaps: Int
        /// Every point and panorama, for the report page.
        public var report: HyperlapseReport

        /// See the type's documentation for the keys.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: SummaryKey.self)
            try c.encode(feed, forKey: "source")
            try c.encode(distance, forKey: "distance")
            try c.encode(routePoints, forKey: "routePoints")
            try c.encode(panoramas, forKey: "panoramas")
            try c.encode(duplicatesDropped, forKey: "duplicatesDropped")
            try c.encode(gaps, forKey: "gaps")
        }
    }

    /// Looks every point of `feed` up, a window at a time.
    /// - Throws: the feed's errors (network, invalid input), `.cancelled`.
    public func run(feed: any PanoramaFeed, progress: ProgressHandler? = nil) async throws -> Summary {
        var report = HyperlapseReport(for: feed)
        var filter = LookupFilter()
        var start = 0
        while start < feed.pointCount {
            let range = start..<min(feed.pointCount, start + max(1, feed.lookupWindow))
            let found = try await feed.lookup(range)
            for (offset, stop) in found.enumerated() {
                report.note(range.lowerBound + offset, stop, filter.classify(stop), feed: feed)
            }
            start = range.upperBound
            progress?(ProgressEvent(stage: .lookup, completed: start, total: feed.pointCount, unit: "points"))
        }
        let counts = report.counts
        return Summary(
            feed: feed.name, distance: feed.distance, routePoints: feed.pointCount, pointUnit: feed.pointUnit,
            panoramas: counts[.panorama] ?? 0, duplicatesDropped: counts[.duplicate] ?? 0,
            gaps: counts[.uncovered] ?? 0, report: report)
    }
}
