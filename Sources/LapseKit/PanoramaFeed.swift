// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Who made the imagery and under which terms, for the credits sidecar and the MP4 metadata.
public struct Attribution: Hashable, Sendable, Codable {
    /// The provider: "Google Street View", "Panoramax", a file name.
    public var source: String
    /// Copyright line as the provider gives it, e.g. "© 2024 Google".
    public var copyright: String?
    /// Author or uploader.
    public var author: String?
    /// Licence name or URL, e.g. "CC-BY-SA-4.0".
    public var licence: String?

    public init(source: String, copyright: String? = nil, author: String? = nil, licence: String? = nil) {
        self.source = source
        self.copyright = copyright
        self.author = author
        self.licence = licence
    }

    /// One line: "source — copyright — author — licence" (parts that are missing are left out).
    public var line: String {
        [source, copyright, author.map { "by \($0)" }, licence].compactMap { $0 }.joined(separator: " — ")
    }
}

/// One frame's panorama in a hyperlapse: which panorama, where along the route, how it is oriented.
public struct HyperlapseStop: Sendable {
    /// The source's id for the panorama (pano id, picture id, file name, video time).
    public var panoramaID: String
    /// The route point this frame stands for; its heading is the smoothed bearing of the road ahead.
    public var routePoint: RoutePoint
    /// Where the panorama was taken (the camera's position for look-at), which may lie a few metres off the
    /// route point (anywhere within the search radius).
    public var position: Coordinate
    /// The panorama's own heading (compass degrees of its centre column), tilt and roll.
    public var pose: PanoramaPose
    public var attribution: Attribution?

    /// - Parameter position: where the panorama was taken; default the route point's coordinate.
    public init(panoramaID: String, routePoint: RoutePoint, position: Coordinate? = nil, pose: PanoramaPose,
                attribution: Attribution? = nil) {
        self.panoramaID = panoramaID
        self.routePoint = routePoint
        self.position = position ?? routePoint.coordinate
        self.pose = pose
        self.attribution = attribution
    }
}

/// What the lookup stage found along a route.
public struct HyperlapsePlan: Sendable {
    /// The frames' panoramas, in route order, consecutive duplicates dropped.
    public var stops: [HyperlapseStop]
    /// Route points looked up.
    public var routePoints: Int
    /// Route length in metres (0 when there is no route, e.g. a video without a track).
    public var distance: Double
    /// Route points with no panorama within the search radius (skipped).
    public var gaps: Int
    /// Route points whose nearest panorama was the same as the previous point's (dropped).
    public var duplicatesDropped: Int

    public init(stops: [HyperlapseStop], routePoints: Int, distance: Double, gaps: Int, duplicatesDropped: Int) {
        self.stops = stops
        self.routePoints = routePoints
        self.distance = distance
        self.gaps = gaps
        self.duplicatesDropped = duplicatesDropped
    }
}

/// Where a hyperlapse's panoramas come from: plans the frames, then delivers each frame's equirectangular image.
public protocol PanoramaFeed: Sendable {
    /// A short name for summaries ("Google Street View", "video overpass.mp4").
    var name: String { get }
    /// Looks up the panoramas along the route.
    func plan(progress: ProgressHandler?) async throws -> HyperlapsePlan
    /// The equirectangular image of stop `index` of the plan (2:1, RGBA). Called for increasing indices, a few
    /// at a time concurrently.
    func image(for stop: HyperlapseStop, index: Int) async throws -> PixelBuffer
}
