// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia
import LapseNet

/// Downloads (or reads from the cache) every tile of a grid concurrently and stitches them.
struct TileFetcher: Sendable {
    let client: HTTPClient
    /// Where tiles are kept, as their `Cache-Control` allows.
    let cache: HTTPCache?
    /// Cache folder parts before the zoom and tile, e.g. `["google", panoId]`.
    let cachePrefix: [String]
    /// Builds a tile's URL.
    let url: @Sendable (TileIndex) -> URL
    /// Throws the source's error for an answer that is not a tile (the source reads its service's errors).
    let check: @Sendable (HTTPResponse, URL) throws -> Void
    let progress: ProgressHandler?

    struct Result: Sendable {
        var image: PanoramaImage.Picture
        var placeholders: [TileIndex]
        var downloaded: Int
        var fromCache: Int
    }

    /// Fetches `tiles` of `grid` (default all) and stitches them; pixels of the other tiles are unset.
    /// - Parameters:
    ///   - grid: the zoom's grid of tiles.
    ///   - tiles: the tiles to fetch (nil: all).
    ///   - yuv: stitch Y′CbCr (BT.709 limited range 4:2:0; the grid's tiles of even size) instead of RGBA.
    /// - Returns: the stitched picture, with the tiles downloaded and read from the cache.
    /// - Throws: the source's errors for a tile (`.network`, `.notFound`, `.invalidInput`), `.cancelled`.
    func fetch(_ grid: TileGrid, tiles: [TileIndex]? = nil, yuv: Bool = false) async throws -> Result {
        var stitcher = yuv ? TileStitcher(yuvGrid: grid) : TileStitcher(grid: grid)
        var downloaded = 0
        var fromCache = 0
        var done = 0
        let wanted = tiles ?? grid.tiles
        let total = wanted.count
        try await withThrowingTaskGroup(of: (TileIndex, PanoramaImage.Picture, Bool).self) { group in
            for tile in wanted {
                group.addTask {
                    try await self.decodedTile(tile, pixelLimit: grid.tileWidth * grid.tileHeight, yuv: yuv)
                }
            }
            for try await (tile, picture, cached) in group {
                switch picture {
                case .rgba(let pixels): stitcher.place(pixels, at: tile)
                case .yuv(let frame): stitcher.place(yuv: frame, at: tile)
                }
                if cached { fromCache += 1 } else { downloaded += 1 }
                done += 1
                progress?(ProgressEvent(stage: .tiles, completed: done, total: total, unit: "tiles"))
            }
        }
        return Result(
            image: stitcher.yuvImage.map { .yuv($0) } ?? .rgba(stitcher.image),
            placeholders: stitcher.placeholders.sorted { ($0.y, $0.x) < ($1.y, $1.x) },
            downloaded: downloaded, fromCache: fromCache)
    }

    /// Attempts at a tile whose body does not decode (whole JPEG markers around broken data: a server or proxy
    /// fault): each failure drops the cached copy and downloads it again.
    static let decodeAttempts = 3

    /// The most bytes of one tile's answer (a 512 × 512 JPEG is 20–150 kB): a larger one is a server fault.
    static let maxTileBytes = 4 << 20

    /// A tile's pixels (RGBA, or Y′CbCr: from the JPEG's own planes where it has them, else through RGBA), and
    /// whether they came from the cache. A body that does not decode, or whose picture has more than `pixelLimit`
    /// pixels (the grid's tile size; its header is read before any pixel memory is taken), is fetched again (up to
    /// ``decodeAttempts`` in all), as a truncated body is.
    /// - Throws: ``LapseError`` `.invalidInput` naming the tile when it never decodes; the fetch's errors.
    private func decodedTile(
        _ tile: TileIndex, pixelLimit: Int, yuv: Bool
    ) async throws -> (TileIndex, PanoramaImage.Picture, Bool) {
        let name = "\(cachePrefix.joined(separator: "/"))/\(tile)"
        var attempt = 1
        while true {
            let (data, cached) = try await tileData(tile)
            do {
                let decoded = try DecodedImage(data: [UInt8](data), name: name, pixelLimit: pixelLimit)
                guard yuv else { return (tile, .rgba(try decoded.pixels(accurate: false)), cached) }
                let frame =
                    try decoded.yuv(width: decoded.displayWidth, height: decoded.displayHeight)
                    ?? YUVFrame(rgba: try decoded.pixels(accurate: false))
                return (tile, .yuv(frame), cached)
            } catch let error as LapseError {
                cache?.remove(key(tile))
                guard attempt < Self.decodeAttempts else {
                    throw LapseError(
                        .invalidInput, name, "the tile does not decode after \(attempt) downloads (\(error.reason))")
                }
                attempt += 1
            }
        }
    }

    func key(_ tile: TileIndex) -> CacheKey {
        CacheKey(parts: cachePrefix + ["z\(tile.zoom)", "\(tile.x)_\(tile.y).jpg"])
    }

    private func tileData(_ tile: TileIndex) async throws -> (Data, Bool) {
        let target = url(tile)
        let check: (HTTPResponse) throws -> Void = { try self.check($0, target) }
        if let cache {
            let (data, cached) = try await cache.get(
                target, key: key(tile), client: client, validate: CacheValidation.jpeg,
                temporaryRefusal: GoogleAPIError.temporaryRefusal, maxBodyBytes: Self.maxTileBytes, check: check)
            return (data, cached)
        }
        let response = try await client.get(
            target, accept: { r in CacheValidation.jpeg(r.body) },
            temporaryRefusal: GoogleAPIError.temporaryRefusal, maxBodyBytes: Self.maxTileBytes)
        try check(response)
        return (response.body, false)
    }
}
