// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The tile layout of a Google Street View panorama at one zoom level.
///
/// The Map Tiles API's rule ("Street View tiles"): zoom runs 0 … 5 and zoom 5 is always the full resolution given by
/// the metadata (`imageWidth` × `imageHeight`); the image at zoom z is `imageWidth >> (5 − z)` wide and
/// `imageHeight >> (5 − z)` high, cut into `tileWidth` × `tileHeight` tiles from the top-left corner, x and y
/// within those. Google's own panoramas are 16384 × 8192 (512 × 256 at zoom 0) or 13312 × 6656 (416 × 208 at
/// zoom 0, edge tiles padded with black); user photospheres have any size (a 7680-wide one is 240 wide at zoom 0).
/// The stitched image is cropped to ``width`` × ``height``. Asking for a tile outside the grid is an error answer.
public struct TileGrid: Sendable, Equatable, CustomStringConvertible {
    /// The highest zoom level, always the full resolution (Map Tiles API documentation).
    public static let highestZoom = 5

    /// Zoom level, 0 (one tile) to ``highestZoom``.
    public let zoom: Int
    /// True image size at this zoom, in pixels.
    public let width: Int
    /// True image height at this zoom, in pixels.
    public let height: Int
    /// Tile size, in pixels.
    public let tileWidth: Int
    /// Tile height, in pixels.
    public let tileHeight: Int

    /// Tiles across and down: enough to cover the image (the last column/row may be padding).
    public var columns: Int { (width + tileWidth - 1) / tileWidth }
    /// Tiles down: enough to cover the image (the last row may be padding).
    public var rows: Int { (height + tileHeight - 1) / tileHeight }
    /// Tiles in the grid.
    public var tileCount: Int { columns * rows }

    /// The grid at `zoom` (clamped to 0 … 5) for a panorama `fullWidth × fullHeight` at full resolution (zoom 5),
    /// cut into tiles of `tileWidth × tileHeight` (each at least 1; the metadata's sizes are checked before they
    /// come here).
    public init(zoom: Int, fullWidth: Int, fullHeight: Int, tileWidth: Int = 512, tileHeight: Int = 512) {
        let z = min(max(0, zoom), Self.highestZoom)
        let shift = Self.highestZoom - z
        self.zoom = z
        self.width = max(1, fullWidth >> shift)
        self.height = max(1, fullHeight >> shift)
        self.tileWidth = max(1, tileWidth)
        self.tileHeight = max(1, tileHeight)
    }

    /// The lowest zoom whose image is at least `width` pixels wide (zoom 5, the full resolution, when none is).
    public static func zoom(forWidth width: Int, fullWidth: Int, fullHeight: Int, tileWidth: Int = 512) -> Int {
        for z in 0...highestZoom
        where TileGrid(zoom: z, fullWidth: fullWidth, fullHeight: fullHeight, tileWidth: tileWidth).width >= width {
            return z
        }
        return highestZoom
    }

    /// Whether `tile` lies within this grid (the only tiles the API serves).
    public func contains(_ tile: TileIndex) -> Bool {
        tile.zoom == zoom && (0..<columns).contains(tile.x) && (0..<rows).contains(tile.y)
    }

    /// Every tile, row by row.
    public var tiles: [TileIndex] {
        (0..<rows).flatMap { y in (0..<columns).map { x in TileIndex(zoom: zoom, x: x, y: y) } }
    }

    /// `zoom Z: W×H, C×R tiles`.
    public var description: String { "zoom \(zoom): \(width)×\(height), \(columns)×\(rows) tiles" }
}
