// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// A route's panoramas from a ``PanoramaSource`` (Google Street View, Panoramax, local 360° photos): the nearest
/// panorama of every route point, consecutive duplicates dropped, points without coverage skipped.
public struct SourcePanoramaFeed: PanoramaFeed {
    /// Where the panoramas come from.
    public let source: any PanoramaSource
    /// The route's points, in order.
    public let points: [RoutePoint]
    /// Search radius for a point's nearest panorama, metres.
    public let radius: Double
    /// The size the panoramas are fetched at.
    public let resolution: PanoramaResolution
    /// The compass heading of the centre column of panoramas whose source knows none (your photos without a
    /// compass): every such panorama is posed so without stabilisation, and the first one anchors the headings
    /// with it. Nil: the source's placeholder (the bearing to the next photo).
    public var panoHeading: Double?
    /// The source's name, with where its positions came from when it says (``positionsFrom``).
    public var name: String {
        Self.displayName(source.name) + (positionsFrom.map { " (positions from \($0))" } ?? "")
    }
    /// Where the source's positions came from when it says (a video's own GPS): part of ``name``.
    public var positionsFrom: String?
    /// The route's points.
    public var pointCount: Int { points.count }
    /// Metres of the route between its points that are jumps, not travelled (your photos of two trips): left out
    /// of ``distance``.
    public var jumped = 0.0
    /// The route's ``Route/copyright`` (see ``PanoramaFeed/routeCopyright``).
    public var routeCopyright: String?
    /// The points that follow a jump (see ``PanoramaFeed/isAfterJump(_:)``).
    public var pointsAfterJumps: Set<Int> = []
    /// Whether point `index` follows a jump (``pointsAfterJumps``).
    public func isAfterJump(_ index: Int) -> Bool { pointsAfterJumps.contains(index) }
    /// Metres of route covered: the last point's distance along the route, less the jumps.
    public var distance: Double { max(0, (points.last?.distanceAlongRoute ?? 0) - jumped) }
    /// 100 points: one Google `panoIds` request.
    public var lookupWindow: Int { 100 }
    private let tally = TileTally()
    /// Your photos' places in capture order, by pano id.
    private let captureOrder: [String: Int]?
    /// The source's tile counts and lower-zoom panoramas, where it fetches tiles.
    public var statistics: PanoramaFeedStatistics {
        PanoramaFeedStatistics(tiles: tally.tiles, panoramasAtLowerZoom: tally.lowerZoom)
    }
    /// Asked for as Y′CbCr first: a source that makes it from JPEG planes (Google's tiles, your photos, Panoramax
    /// pictures) gives it, nil for a panorama that needs the RGBA path. Your own photos and a video's frames are
    /// one camera's captures along its track.
    public var traits: PanoramaFeedTraits {
        var t = PanoramaFeedTraits()
        t.yuvImages = true
        t.followsCamera = source.name == "local" || source.name == "video"
        t.continuousCapture = source.name == "video"
        t.analysisRestriction = source.analysisRestriction
        t.sourceProjection = source.projection
        return t
    }

    /// - Parameters:
    ///   - source: where to look.
    ///   - points: the resampled route.
    ///   - radius: search radius in metres.
    ///   - resolution: the panorama size to fetch (see ``autoResolution(frameWidth:fov:)``).
    public init(source: any PanoramaSource, points: [RoutePoint], radius: Double, resolution: PanoramaResolution) {
        self.source = source
        if let local = source as? LocalPhotoSource {
            captureOrder = Dictionary(uniqueKeysWithValues: local.panoramas.enumerated().map { ($1.id, $0) })
        } else {
            captureOrder = nil
        }
        self.points = points
        self.radius = radius
        self.resolution = resolution
    }

    /// The panorama width that shows a frame of `frameWidth` pixels at `fov` degrees without visible
    /// upscaling: 3/4 of one source pixel per output pixel (`0.75 · frameWidth · 360 / fov`). For 1280 px at 90°
    /// that is 3840 px, which Google serves at zoom 3 (4096 × 2048).
    public static func autoResolution(frameWidth: Int, fov: Double) -> PanoramaResolution {
        .atLeast(width: Int((0.75 * Double(frameWidth) * 360 / fov).rounded()))
    }

    /// The nearest panorama of each point of `range` within ``radius``.
    /// - Throws: ``LapseError`` `.usage` for a bad radius; the source's errors (no coverage is not an error).
    public func lookup(_ range: Range<Int>) async throws -> [HyperlapseStop?] {
        let window = Array(points[range])
        let matches = try await PanoramaLookup.matches(for: window, in: source, radius: radius)
        return matches.map { match in
            match.panorama.map { pano in
                let known = Self.headingUncertainty(pano) != nil
                let point = window[match.index]
                return HyperlapseStop(
                    panoramaID: pano.id, routePoint: point, position: pano.coordinate,
                    pose: PanoramaPose(
                        heading: known
                            ? pano.heading : normalizeDegrees(panoHeading ?? placeholderHeading(pano, point)),
                        tilt: pano.tilt, roll: pano.roll),
                    attribution: Attribution(
                        source: Self.displayName(pano.source), copyright: pano.copyright,
                        author: pano.author, license: pano.license),
                    panorama: pano, headingUncertainty: Self.headingUncertainty(pano),
                    levelUncertainty: Self.levelUncertainty(pano), sequenceIndex: captureOrder?[pano.id])
            }
        }
    }

    /// The heading a panorama whose source knows none is posed at until the stabiliser has its say: your photos'
    /// bearing to the next photo (the source's), else — a Panoramax picture without `view:azimuth`, a Google
    /// panorama without a heading — the route's direction of travel at the point (cameras mostly face the way they
    /// go, and the stabiliser turns it to what its pictures' motion and positions say).
    private func placeholderHeading(_ pano: PanoramaMetadata, _ point: RoutePoint) -> Double {
        followsCamera ? pano.heading : point.heading
    }

    /// How far a source's tilt and roll can be trusted (degrees, one standard deviation): Google's about 1°, a
    /// Panoramax picture's `pers:pitch`/`pers:roll` about 3°, a photo's GPano `PosePitchDegrees`/`PoseRollDegrees`
    /// (a camera's level sensor) about 2°, the last two only when not both 0 (a placeholder, or a picture the
    /// camera levelled), a Mapillary image's `computed_rotation` (structure from motion) about 2°, a GoPro MAX
    /// `.360` frame's level from its camera's gravity (``LapsePanorama/VideoPanoramaSource/level(at:)``, the only
    /// tilt or roll a video frame has) about 2°; nil when the source does not know them (the camera is then taken
    /// to be upright).
    static func levelUncertainty(_ pano: PanoramaMetadata) -> Double? {
        switch pano.source {
        case "google": return 1
        case "panoramax" where pano.tilt != 0 || pano.roll != 0: return 3
        case "mapillary" where pano.headingSource == "computed_rotation": return 2
        case "local" where pano.tilt != 0 || pano.roll != 0: return 2
        case "video" where pano.tilt != 0 || pano.roll != 0: return 2
        default: return nil
        }
    }

    /// The stop's panorama as RGBA, only the tiles `region` needs where the source is tiled.
    /// - Throws: the source's errors (`.notFound` for a panorama gone, `.network`, `.invalidInput`).
    public func image(for stop: HyperlapseStop, region: PanoramaRegion?) async throws -> PixelBuffer {
        guard let pano = stop.panorama else {
            throw LapseError(.invalidInput, name, "stop \(stop.panoramaID) has no panorama metadata")
        }
        let image = try await source.image(for: pano, resolution: resolution, region: region)
        tally.add(downloaded: image.tilesDownloaded, fromCache: image.tilesFromCache, lowerZoom: image.fellBack)
        return image.pixels
    }

    /// The stop's panorama as Y′CbCr where the source gives it so (nil where it does not).
    /// - Throws: as ``image(for:region:)``.
    public func yuvImage(for stop: HyperlapseStop, region: PanoramaRegion?) async throws -> YUVFrame? {
        guard let pano = stop.panorama else {
            throw LapseError(.invalidInput, name, "stop \(stop.panoramaID) has no panorama metadata")
        }
        guard let image = try await source.yuvImage(for: pano, resolution: resolution, region: region) else {
            return nil
        }
        tally.add(downloaded: image.tilesDownloaded, fromCache: image.tilesFromCache, lowerZoom: image.fellBack)
        return image.yuv
    }

    /// How far a source's heading can be trusted (degrees, one standard deviation): Google's metadata about
    /// 1.5°, Mapillary's refined `computed_rotation`/`computed_compass_angle` (structure from motion) about 3°, a
    /// Panoramax azimuth or a photo's compass about 10°, Mapillary's raw `compass_angle` (the camera's compass, often
    /// a phone's) about 15°; nil for headings the source does not know (placeholders, bearings between photos).
    static func headingUncertainty(_ pano: PanoramaMetadata) -> Double? {
        switch pano.headingSource {
        case "metadata": return 1.5
        case "computed_rotation", "computed_compass_angle": return 3
        case "view:azimuth", "GPSImgDirection", "PoseHeadingDegrees": return 10
        case "compass_angle": return 15
        default: return nil
        }
    }

    /// Tells the source the job is over (it may write its caches).
    public func jobFinished() { source.jobFinished() }

    /// The source may write a later picture into this one's planes (``PanoramaSource/recycle(_:)``).
    public func recycle(_ picture: consuming YUVFrame) { source.recycle(picture) }

    /// The position of route point `index`.
    public func pointCoordinate(_ index: Int) -> Coordinate? {
        points.indices.contains(index) ? points[index].coordinate : nil
    }

    /// The stop's panorama at ``SphereImage/standardWidth`` wide, or as small as the source has it.
    public func analysisImage(for stop: HyperlapseStop) async throws -> PixelBuffer {
        guard let pano = stop.panorama else {
            throw LapseError(.invalidInput, name, "stop \(stop.panoramaID) has no panorama metadata")
        }
        let image = try await source.analysisImage(for: pano, width: SphereImage.standardWidth)
        tally.add(downloaded: image.tilesDownloaded, fromCache: image.tilesFromCache)
        return image.pixels
    }

    /// The display name of a source whose imagery must carry its credit in the picture, nil for one whose need not.
    static func displayName(_ source: String) -> String {
        switch source {
        case "google": return Attribution.googleStreetView
        case "panoramax": return Attribution.panoramax
        case "mapillary": return Attribution.mapillary
        case "local": return "local 360° photos"
        default: return source
        }
    }
}

/// Tiles downloaded and read from the cache, summed over the panoramas (nil until a tiled panorama came).
private final class TileTally: Sendable {
    private struct Counts { var downloaded = 0, fromCache = 0, any = false, lowerZooms = 0 }
    private let counts = Mutex(Counts())

    func add(downloaded d: Int, fromCache c: Int, lowerZoom: Bool = false) {
        counts.withLock {
            $0.downloaded += d
            $0.fromCache += c
            $0.any = $0.any || d + c > 0
            if lowerZoom { $0.lowerZooms += 1 }
        }
    }

    /// Frames whose panorama came from a lower zoom than asked for.
    var lowerZoom: Int { counts.withLock { $0.lowerZooms } }

    var tiles: (downloaded: Int, fromCache: Int)? { counts.withLock { $0.any ? ($0.downloaded, $0.fromCache) : nil } }
}
