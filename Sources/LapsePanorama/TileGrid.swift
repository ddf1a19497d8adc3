// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The tile layout of a Google Street View panorama at one zoom level.
///
/// The full-resolution size (from the metadata) halves at each zoom level below the maximum. Two families exist:
/// newer panoramas 512·2^z wide (16384 × 8192 at zoom 5) and older ones 416·2^z wide (13312 × 6656 at zoom 5),
/// whose edge tiles are padded with black; the stitched image is cropped to ``width`` × ``height``.
/// Source: Map Tiles API metadata (imageWidth, imageHeight, tileWidth, tileHeight); docs/ARCHITECTURE.md table.
public struct TileGrid: Sendable, Equatable, CustomStringConvertible {
    public let zoom: Int
    /// True image size at this zoom, in pixels.
    public let width: Int
    public let height: Int
    /// Tile size, in pixels.
    public let tileWidth: Int
    public let tileHeight: Int

    /// Tiles across and down: enough to cover the image (the last column/row may be padding).
    public var columns: Int { (width + tileWidth - 1) / tileWidth }
    public var rows: Int { (height + tileHeight - 1) / tileHeight }
    public var tileCount: Int { columns * rows }

    /// The grid at `zoom` for a panorama `fullWidth × fullHeight` at its highest zoom.
    public init(zoom: Int, fullWidth: Int, fullHeight: Int, tileWidth: Int = 512, tileHeight: Int = 512) {
        let maxZoom = Self.maxZoom(fullWidth: fullWidth, tileWidth: tileWidth)
        let z = min(max(0, zoom), maxZoom)
        let shift = maxZoom - z
        self.zoom = z
        self.width = max(1, fullWidth >> shift)
        self.height = max(1, fullHeight >> shift)
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
    }

    /// The highest zoom level of a panorama `fullWidth` wide: the smallest z with tileWidth·2^z ≥ fullWidth.
    public static func maxZoom(fullWidth: Int, tileWidth: Int = 512) -> Int {
        var z = 0
        while tileWidth << z < fullWidth && z < 12 { z += 1 }
        return z
    }

    /// The lowest zoom whose image is at least `width` pixels wide (the highest zoom when none is).
    public static func zoom(forWidth width: Int, fullWidth: Int, fullHeight: Int, tileWidth: Int = 512) -> Int {
        let maxZ = maxZoom(fullWidth: fullWidth, tileWidth: tileWidth)
        for z in 0...maxZ where TileGrid(zoom: z, fullWidth: fullWidth, fullHeight: fullHeight, tileWidth: tileWidth).width >= width {
            return z
        }
        return maxZ
    }

    /// Every tile, row by row.
    public var tiles: [TileIndex] {
        (0..<rows).flatMap { y in (0..<columns).map { x in TileIndex(zoom: zoom, x: x, y: y) } }
    }

    public var description: String { "zoom \(zoom): \(width)×\(height), \(columns)×\(rows) tiles" }
}
