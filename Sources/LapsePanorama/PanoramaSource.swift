// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseGeo
import LapseMedia
import LapseRender

/// A place to get street-level panoramas from: Google Street View, Panoramax, Mapillary, a folder of 360° photos,
/// a 360° video.
public protocol PanoramaSource: Sendable {
    /// Short name used in manifests and cache keys: `google`, `panoramax`, `mapillary`, `local`, `video`.
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
    /// - Returns: the picture and how it was made.
    func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution) async throws -> PanoramaImage

    /// As ``image(for:resolution:)``, for a caller that reads only `region` of the image: a tiled source
    /// (Google Street View) fetches only the tiles the region touches and leaves the other pixels unset
    /// (``PanoramaImage/tilesSkipped`` counts them). Sources that deliver whole images ignore `region`.
    func image(for panorama: PanoramaMetadata, resolution: PanoramaResolution, region: PanoramaRegion?) async throws
        -> PanoramaImage

    /// As ``image(for:resolution:region:)``, the pixels as Y′CbCr (BT.709 limited range 4:2:0, ``PanoramaImage/yuv``)
    /// made from the source's own planes without an RGBA picture (JPEG tiles), for a renderer that takes Y′CbCr;
    /// nil when the source makes RGBA only (the default).
    /// - Throws: as ``image(for:resolution:)``.
    func yuvImage(for panorama: PanoramaMetadata, resolution: PanoramaResolution, region: PanoramaRegion?)
        async throws -> PanoramaImage?

    /// The whole panorama, small, for motion analysis: equirectangular and at least `width` pixels wide where the
    /// source has that much, made as cheaply as the source allows (a photo decoded at reduced scale; Google's
    /// lowest zoom, one tile, narrower). Default: ``image(for:resolution:)`` at `.atLeast(width:)`.
    /// - Throws: as ``image(for:resolution:)``.
    func analysisImage(for panorama: PanoramaMetadata, width: Int) async throws -> PanoramaImage

    /// Why this source's pictures may not be analysed — measured for motion, tone matched — or nil when they may
    /// (the default). Google's Map Tiles API policies allow its imagery for map visualisation only and name image
    /// analysis and machine interpretation among the uses not allowed: Street View panoramas are posed from their
    /// metadata (heading, tilt, roll), which is what Google means to be used.
    var analysisRestriction: String? { get }

    /// The caller is done with a picture ``yuvImage(for:resolution:region:)`` gave: a source that makes pictures in
    /// memory of its own may write a later one into its planes (``LapseMedia/SpareFrames``). Default: nothing (the
    /// picture is freed).
    func recycle(_ picture: consuming YUVFrame)

    /// The job using this source has finished: content kept only for the job (Google's, without permission to
    /// be cached; see ``HTTPCache``) is removed. Default: nothing.
    func jobFinished()

    /// What this source's images are: equirectangular (the default), or a GoPro MAX `.360` file's cube-map atlas
    /// (``LapseRender/GoProEAC``: the video source of such a file), which views are rendered from as it is and
    /// ``PanoramaImage/equirectangularPixels()`` unfolds.
    var projection: SourceProjection { get }
}

extension PanoramaSource {
    /// Default: nothing to do.
    public func jobFinished() {}

    /// Default: nothing (the picture is freed).
    public func recycle(_ picture: consuming YUVFrame) {}

    /// Default: equirectangular pictures.
    public var projection: SourceProjection { .equirectangular }

    /// Default: nil (pictures may be analysed).
    public var analysisRestriction: String? { nil }

    /// Default: nil (the source gives RGBA only).
    public func yuvImage(for panorama: PanoramaMetadata, resolution: PanoramaResolution, region: PanoramaRegion?)
        async throws -> PanoramaImage?
    { nil }

    /// Default: the whole picture at the smallest resolution at least `width` wide.
    public func analysisImage(for panorama: PanoramaMetadata, width: Int) async throws -> PanoramaImage {
        try await image(for: panorama, resolution: .atLeast(width: width))
    }

    /// Default: the whole picture at `resolution` (a source that is not tiled reads no `region`).
    public func image(
        for panorama: PanoramaMetadata, resolution: PanoramaResolution,
        region: PanoramaRegion?
    ) async throws -> PanoramaImage {
        try await image(for: panorama, resolution: resolution)
    }
}

/// The part of an equirectangular panorama a caller will read (the view of one frame), asked for once the
/// image size is known, on a grid of cells such as a source's tiles.
public struct PanoramaRegion: Sendable {
    /// `cells(width, height, cellWidth, cellHeight)`: one flag per cell of `cellWidth × cellHeight` pixels laid over
    /// a `width × height` image from its top-left corner, row by row (`ceil(width / cellWidth)` cells a row);
    /// true where some pixel of the cell will be read.
    public let cells: @Sendable (_ width: Int, _ height: Int, _ cellWidth: Int, _ cellHeight: Int) throws -> [Bool]

    /// A region whose `cells` says, for a picture of `width × height` in cells of `cellWidth × cellHeight`, which
    /// cells the view reads (row by row).
    public init(
        cells: @escaping @Sendable (_ width: Int, _ height: Int, _ cellWidth: Int, _ cellHeight: Int) throws -> [Bool]
    ) {
        self.cells = cells
    }
}
