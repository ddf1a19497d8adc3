// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A route's panoramas from a ``PanoramaSource`` (Google Street View, Panoramax, local 360° photos): the nearest
/// panorama of every route point, consecutive duplicates dropped, points without coverage skipped.
public final class SourcePanoramaFeed: PanoramaFeed, @unchecked Sendable {
    // @unchecked: `planned` is written once by plan(), under `lock`, before any image() call.
    public let source: any PanoramaSource
    public let points: [RoutePoint]
    public let radius: Double
    public let resolution: PanoramaResolution
    private let lock = NSLock()
    private var planned: [PanoramaMetadata] = []
    public var name: String { Self.displayName(source.name) }

    /// - Parameters:
    ///   - source: where to look.
    ///   - points: the resampled route.
    ///   - radius: search radius in metres.
    ///   - resolution: the panorama size to fetch (see ``autoResolution(frameWidth:fov:)``).
    public init(source: any PanoramaSource, points: [RoutePoint], radius: Double, resolution: PanoramaResolution) {
        self.source = source
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

    public func plan(progress: ProgressHandler?) async throws -> HyperlapsePlan {
        progress?(ProgressEvent(stage: "lookup", completed: 0, total: points.count, unit: "points"))
        let matches = try await PanoramaLookup.matches(for: points, in: source, radius: radius)
        progress?(ProgressEvent(stage: "lookup", completed: points.count, total: points.count, unit: "points"))
        var stops: [HyperlapseStop] = []
        var metadata: [PanoramaMetadata] = []
        for match in matches {
            guard let pano = match.panorama, !match.repeatsPrevious else { continue }
            let point = points[match.index]
            stops.append(HyperlapseStop(
                panoramaID: pano.id, routePoint: point, position: pano.coordinate,
                pose: PanoramaPose(heading: pano.heading, tilt: pano.tilt, roll: pano.roll),
                attribution: Attribution(source: Self.displayName(pano.source), copyright: pano.copyright,
                                         author: pano.author, licence: pano.licence)))
            metadata.append(pano)
        }
        lock.withLock { planned = metadata }
        let coverage = CoverageSummary(matches)
        return HyperlapsePlan(stops: stops, routePoints: points.count, distance: points.last?.distanceAlongRoute ?? 0,
                              gaps: coverage.withoutImagery, duplicatesDropped: coverage.consecutiveDuplicates)
    }

    public func image(for stop: HyperlapseStop, index: Int) async throws -> PixelBuffer {
        let pano = lock.withLock { planned[index] }
        return try await source.image(for: pano, resolution: resolution).pixels
    }

    static func displayName(_ source: String) -> String {
        switch source {
        case "google": return "Google Street View"
        case "panoramax": return "Panoramax"
        case "local": return "local 360° photos"
        default: return source
        }
    }
}
