// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseGeo

/// A place to get street-level panoramas from: Google Street View, Panoramax, a folder of 360° photos,
/// a 360° video.
public protocol PanoramaSource: Sendable {
    /// Short name used in manifests and cache keys: `google`, `panoramax`, `local`, `video`.
    var name: String { get }

    /// The nearest panorama to each coordinate within `radius`.
    /// - Parameters:
    ///   - coordinates: the points to look up, any number (sources batch them, e.g. Google 100 a request).
    ///   - radius: search radius in metres, > 0.
    /// - Returns: one entry per coordinate, in order: the panorama's metadata, or `nil` when none lies within `radius`.
    /// - Throws: ``LapseCore/LapseError``: `.denied` (bad key), `.network`, `.rateLimited`, `.invalidInput`
    ///   (a malformed answer). No coverage is not an error.
    func nearest(to coordinates: [Coordinate], radius: Double) async throws -> [PanoramaMetadata?]

    /// The equirectangular image of a panorama found by ``nearest(to:radius:)``.
    /// - Parameters:
    ///   - panorama: metadata returned by this source.
    ///   - resolution: the size wanted.
    /// - Throws: ``LapseCore/LapseError`` `.notFound` when the source has no imagery for it (e.g. only black
    ///   placeholder tiles), `.network`…, `.invalidInput` when the image cannot be decoded.
    func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution) async throws -> PanoramaImage
}
