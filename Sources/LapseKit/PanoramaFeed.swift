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
    public var license: String?

    /// An attribution of imagery from `source` (the service or `your photos`), with its copyright line, author and
    /// licence where the imagery has them.
    public init(source: String, copyright: String? = nil, author: String? = nil, license: String? = nil) {
        self.source = source
        self.copyright = copyright
        self.author = author
        self.license = license
    }

    /// One line: "source — copyright — author — licence" (parts that are missing are left out); Street View's
    /// source as "Google Maps Street View", the name Google's Map Tiles policies ask a credit to give.
    public var line: String {
        let named = source == Self.googleStreetView ? "Google Maps Street View" : source
        return [named, copyright, author.map { "by \($0)" }, license].compactMap { $0 }.joined(separator: " — ")
    }

    /// JSON keys as the files written so far have them (`licence`).
    enum CodingKeys: String, CodingKey {
        case source, copyright, author
        case license = "licence"
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
    /// How far ``pose``'s heading can be trusted: one standard deviation in degrees (Google's metadata about 1.5,
    /// a photo's compass about 10), or nil when the source does not know it (a placeholder such as a video's
    /// `--pano-heading`, or the bearing between consecutive photos).
    public var headingUncertainty: Double?
    /// Likewise for ``pose``'s tilt and roll; nil when the source does not know them (the camera is then taken to
    /// be upright, to within a few degrees).
    public var levelUncertainty: Double?
    /// Where ``pose`` came from after stabilisation (see ``FrameOrientation``), nil before.
    public var orientation: FrameOrientation?
    /// The panorama's place in its capture sequence (your photos in capture order), when the source has one: a
    /// hyperlapse does not step back in it (a stop whose panorama was taken up to 30 places before the previous
    /// frame's is dropped as a duplicate, as noisy GPS would otherwise make the frames jump back and forth).
    public var sequenceIndex: Int?
    /// Who to credit for the panorama (nil: your own imagery, no credit).
    public var attribution: Attribution?
    /// The source's metadata of the panorama (nil for video frames).
    public var panorama: PanoramaMetadata?

    /// - Parameters:
    ///   - panoramaID: the panorama's id in its source.
    ///   - routePoint: the route point the stop is for.
    ///   - position: where the panorama was taken; default the route point's coordinate.
    ///   - pose: how the panorama sits in the world, as its source says.
    ///   - attribution: who to credit (nil: your own imagery).
    ///   - panorama: the source's metadata (nil for video frames).
    ///   - headingUncertainty: how sure the pose's heading is, degrees (nil: not known).
    ///   - levelUncertainty: how sure its tilt and roll are, degrees (nil: not known).
    ///   - sequenceIndex: its place in its capture sequence, where the source has one.
    public init(
        panoramaID: String, routePoint: RoutePoint, position: Coordinate? = nil, pose: PanoramaPose,
        attribution: Attribution? = nil, panorama: PanoramaMetadata? = nil, headingUncertainty: Double? = nil,
        levelUncertainty: Double? = nil, sequenceIndex: Int? = nil
    ) {
        self.panorama = panorama
        self.sequenceIndex = sequenceIndex
        self.headingUncertainty = headingUncertainty
        self.levelUncertainty = levelUncertainty
        self.panoramaID = panoramaID
        self.routePoint = routePoint
        self.position = position ?? routePoint.coordinate
        self.pose = pose
        self.attribution = attribution
    }
}

/// Where a hyperlapse's panoramas come from: the points to look up (route points, video frames), the panorama of
/// each point, and each frame's equirectangular image.
///
/// The job looks points up a window at a time, a bounded distance ahead of rendering, so memory and the time to
/// the first frame do not grow with the route's length.
/// What a feed's panoramas are and how a job treats them: one value, set by the feed (a video's frames, your
/// photos, panoramas found along a planned route), read through ``PanoramaFeed``'s properties of the same names.
public struct PanoramaFeedTraits: Sendable, Equatable {
    /// What a point is, plural, for progress and summaries: "route points" (the default), "video frames".
    public var pointUnit = "route points"
    /// Whether the images can come as Y′CbCr (BT.709 limited range 4:2:0: a video decoded as it is, JPEG tiles and
    /// pictures from their planes): then the job asks for them with ``PanoramaFeed/yuvImage(for:region:)`` first
    /// and renders them without an RGBA round trip.
    public var yuvImages = false
    /// Why the pictures may not be analysed (``LapsePanorama/PanoramaSource/analysisRestriction``), or nil when
    /// they may: then the stops are posed as their metadata says, with no motion measured and no tone matched,
    /// whatever the stabilisation settings.
    public var analysisRestriction: String?
    /// Whether the stops are one camera's consecutive captures along its own path (your 360° photos, a 360°
    /// video), rather than panoramas found along a route planned apart from them: then the direction of travel is
    /// measured from the pictures, and a frame whose camera did not move is dropped.
    public var followsCamera = false
    /// Whether the stops' positions are where their panoramas were taken (false for a video without a track, whose
    /// "positions" only count frames).
    public var positionsKnown = true
    /// Whether consecutive stops are frames of one continuous recording (a video): their changes of tone are real
    /// (auto-exposure follows the light smoothly), so tone matching leaves them.
    public var continuousCapture = false
    /// What the images are: equirectangular, or a GoPro MAX `.360` file's cube-map atlas, which the views are
    /// rendered from as it is (the analysis's pictures are equirectangular whatever this says).
    public var sourceProjection = SourceProjection.equirectangular

    /// Traits of a source of the commonest kind: equirectangular RGBA pictures at known positions, along a route
    /// (not carried with the camera), analysable.
    public init() {}
}

/// What fetching a feed's images has cost so far.
public struct PanoramaFeedStatistics: Sendable, Equatable {
    /// Tiles of tiled sources: (downloaded, read from the cache); nil for other sources.
    public var tiles: (downloaded: Int, fromCache: Int)?
    /// Panoramas rendered from a lower zoom than asked for, the service having no imagery at that zoom.
    public var panoramasAtLowerZoom = 0

    /// Statistics with the given counts (none by default).
    public init(tiles: (downloaded: Int, fromCache: Int)? = nil, panoramasAtLowerZoom: Int = 0) {
        self.tiles = tiles
        self.panoramasAtLowerZoom = panoramasAtLowerZoom
    }

    /// Equal when the tile counts (or their absence) and the lower-zoom count are.
    public static func == (a: Self, b: Self) -> Bool {
        a.tiles?.downloaded == b.tiles?.downloaded && a.tiles?.fromCache == b.tiles?.fromCache
            && a.panoramasAtLowerZoom == b.panoramasAtLowerZoom
    }
}

/// Where a hyperlapse's stops and pictures come from: a panorama source along a route (``SourcePanoramaFeed``) or
/// a 360° video (``VideoPanoramaFeed``). The job looks points up a window at a time, then asks each stop's picture
/// (``image(for:region:)``, or ``yuvImage(for:region:)`` where ``yuvImages``), and the stabiliser each analysed stop's
/// small picture (``analysisPicture(for:)``). Traits (``traits``) and statistics (``statistics``) say what kind of
/// source it is and what it fetched.
public protocol PanoramaFeed: Sendable {
    /// A short name for summaries ("Google Street View", "video overpass.mp4").
    var name: String { get }
    /// Points to look up (route points or video frames), ≥ 0.
    var pointCount: Int { get }
    /// What the feed's panoramas are and how the job treats them (``PanoramaFeedTraits``). Default: panoramas found
    /// along a planned route, equirectangular RGBA, which may be analysed.
    var traits: PanoramaFeedTraits { get }
    /// What fetching the images has cost so far (``PanoramaFeedStatistics``). Default: nothing counted.
    var statistics: PanoramaFeedStatistics { get }
    /// Route length in metres (0 when there is no route, e.g. a video without a track).
    var distance: Double { get }
    /// How many points a lookup should cover at once (e.g. 100: one Google `panoIds` request).
    var lookupWindow: Int { get }
    /// The panorama of each point of `range` (a sub-range of `0..<pointCount`), in order; `nil` where a point has
    /// no coverage. Consecutive duplicates are left in (the job drops them). Called for consecutive ranges from 0,
    /// the next one possibly while frames of the previous one are being rendered.
    func lookup(_ range: Range<Int>) async throws -> [HyperlapseStop?]
    /// The equirectangular image (2:1, RGBA) of a stop found by ``lookup(_:)``. Called a few at a time
    /// concurrently, in increasing order of stops.
    /// - Parameters:
    ///   - stop: a stop ``lookup(_:)`` gave.
    ///   - region: the part of the image the frame reads; a tiled source fetches only those tiles and leaves the
    ///     other pixels unset.
    /// - Returns: the picture, RGBA.
    /// - Throws: ``LapseError`` `.notFound` for a panorama gone or without imagery, `.invalidInput` for a picture
    ///   that does not decode, `.network`.
    func image(for stop: HyperlapseStop, region: PanoramaRegion?) async throws -> PixelBuffer
    /// The equirectangular image of a stop as Y′CbCr (as ``image(for:region:)``: a tiled source fetches only what
    /// `region` touches), or nil when this one comes as RGBA only (then ``image(for:region:)`` is asked); only
    /// when ``yuvImages``. Called as ``image(for:region:)`` would be. Default: throws.
    func yuvImage(for stop: HyperlapseStop, region: PanoramaRegion?) async throws -> YUVFrame?
    /// The job is done with a picture ``yuvImage(for:region:)`` gave: a feed that decodes into memory of its own
    /// may copy a later picture into its planes. Default: nothing (the picture is freed).
    func recycle(_ picture: consuming YUVFrame)
    /// The whole panorama of a stop, small, for motion analysis (equirectangular, at least
    /// ``SphereImage/standardWidth`` wide where the source has that), as cheaply as the source allows. Called
    /// a few at a time concurrently, in increasing order of stops, ahead of ``image(for:region:)``.
    /// Default: ``image(for:region:)`` of the whole panorama.
    func analysisImage(for stop: HyperlapseStop) async throws -> PixelBuffer
    /// The motion analysis's picture of a stop (``SphereImage``), made from ``analysisImage(for:)`` or, where the
    /// source has its pixels in another form, straight from those (a video's Y′CbCr frames). Called as
    /// ``analysisImage(for:)`` would be. Default: `SphereImage(analysisImage(for: stop))`.
    func analysisPicture(for stop: HyperlapseStop) async throws -> SphereImage
    /// Measure the motion between every n-th stop only (default 1, every stop): for frames of a recording so
    /// close together that the motion between neighbours is too small to measure well, and costs as much. The
    /// stops between share the motion measured across them evenly. The default ``isAnalysed(_:seen:last:)``
    /// follows it; a feed that chooses its stops otherwise gives the typical step here (it is reported).
    var analysisStride: Int { get }
    /// Whether a stop is analysed (its picture fetched and its motion from the last one analysed measured):
    /// `seen` counts the stops given to the stabiliser before it, `last` says it is the route's last. Default:
    /// every ``analysisStride``-th stop, and the last.
    func isAnalysed(_ stop: HyperlapseStop, seen: Int, last: Bool) -> Bool
    /// The stop will not be rendered (the stabiliser dropped it: its camera had not moved): a feed that decodes
    /// ahead need not keep its image. Default: nothing.
    func skip(_ stop: HyperlapseStop)
    /// Rendering begins at this stop, not at the first (a segment of the job, ``HyperlapseJob/Segment``), after
    /// every stop was looked up and analysed: a feed that decodes front to back may start there. Default: nothing.
    func startRendering(at stop: HyperlapseStop)
    /// Where point `index` (0 ..< ``pointCount``) lies, for reports (nil when the feed has no positions; the
    /// default).
    func pointCoordinate(_ index: Int) -> Coordinate?
    /// Who holds the rights in the route's data (``Route/copyright``: `Google` for a route from Google Maps
    /// Platform, which the report then shows on no map and credits), nil when none is named (the default).
    var routeCopyright: String? { get }
    /// Whether point `index` is the first after a jump (your photos of two trips): no route leads to it from the
    /// point before. Default: false.
    func isAfterJump(_ index: Int) -> Bool
    /// The job has written its outputs: what was kept only for it may go (see ``PanoramaSource/jobFinished()``).
    /// Default: nothing.
    func jobFinished()
}

extension PanoramaFeed {
    /// Default: the commonest source's traits (``PanoramaFeedTraits/init()``).
    public var traits: PanoramaFeedTraits { PanoramaFeedTraits() }
    /// Default: nothing counted.
    public var statistics: PanoramaFeedStatistics { PanoramaFeedStatistics() }
    /// Whether ``yuvImage(for:region:)`` gives pictures (``PanoramaFeedTraits/yuvImages``).
    public var yuvImages: Bool { traits.yuvImages }
    /// Default: throws `.other` (a feed without ``yuvImages`` is never asked).
    public func yuvImage(for stop: HyperlapseStop, region: PanoramaRegion?) async throws -> YUVFrame? {
        throw LapseError(.other, name, "no Y′CbCr images")
    }
    /// Default: nothing.
    public func recycle(_ picture: consuming YUVFrame) {}
    /// What a route point is called in messages (``PanoramaFeedTraits/pointUnit``).
    public var pointUnit: String { traits.pointUnit }
    /// Tiles downloaded and read from the cache (``PanoramaFeedStatistics/tiles``).
    public var tiles: (downloaded: Int, fromCache: Int)? { statistics.tiles }
    /// Panoramas rendered from a lower zoom than asked (``PanoramaFeedStatistics/panoramasAtLowerZoom``).
    public var panoramasAtLowerZoom: Int { statistics.panoramasAtLowerZoom }
    /// Whether the camera is carried along the route (``PanoramaFeedTraits/followsCamera``).
    public var followsCamera: Bool { traits.followsCamera }
    /// Why the pictures may not be analysed (``PanoramaFeedTraits/analysisRestriction``).
    public var analysisRestriction: String? { traits.analysisRestriction }
    /// Whether the stops have positions (``PanoramaFeedTraits/positionsKnown``).
    public var positionsKnown: Bool { traits.positionsKnown }
    /// Whether the pictures were taken as one continuous capture (``PanoramaFeedTraits/continuousCapture``).
    public var continuousCapture: Bool { traits.continuousCapture }
    /// Default: every stop is analysed (1).
    public var analysisStride: Int { 1 }
    /// Default: every ``analysisStride``-th stop seen, and the last.
    public func isAnalysed(_ stop: HyperlapseStop, seen: Int, last: Bool) -> Bool {
        seen % max(1, analysisStride) == 0 || last
    }
    /// Default: nothing to do.
    public func skip(_ stop: HyperlapseStop) {}
    /// Default: nothing to do.
    public func startRendering(at stop: HyperlapseStop) {}
    /// Default: nothing to do.
    public func jobFinished() {}
    /// How the pictures are laid out (``PanoramaFeedTraits/sourceProjection``).
    public var sourceProjection: SourceProjection { traits.sourceProjection }
    /// Default: nil (no positions of its own).
    public func pointCoordinate(_ index: Int) -> Coordinate? { nil }
    /// Default: nil (no route service to credit).
    public var routeCopyright: String? { nil }
    /// Default: false (no jumps).
    public func isAfterJump(_ index: Int) -> Bool { false }
    /// Default: the stop's whole picture, as rendering would fetch it.
    public func analysisImage(for stop: HyperlapseStop) async throws -> PixelBuffer {
        try await image(for: stop, region: nil)
    }
    /// Default: the ``SphereImage`` of ``analysisImage(for:)``.
    public func analysisPicture(for stop: HyperlapseStop) async throws -> SphereImage {
        try SphereImage(try await analysisImage(for: stop))
    }
}
