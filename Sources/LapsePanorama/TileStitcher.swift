// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia

/// Assembles decoded tiles into one equirectangular image, cropping the padding, and spots all-black
/// placeholder tiles (HTTP 200 with a black JPEG is how Google answers for tiles it has no imagery for).
public struct TileStitcher: Sendable {
    public let grid: TileGrid
    private var canvas: PixelBuffer
    /// Tiles whose visible part (inside the true image size) was all black.
    public private(set) var placeholders: [TileIndex] = []

    /// The largest channel value a pixel of a placeholder tile may have (JPEG noise on pure black stays ≤ 3).
    public static let blackThreshold: UInt8 = 6

    /// A canvas whose pixels are unset until tiles are placed (placing every tile of the grid sets them all).
    public init(grid: TileGrid) {
        self.grid = grid
        canvas = PixelBuffer(uninitializedWidth: grid.width, height: grid.height)
    }

    /// Copies `tile` (RGBA, normally tileWidth × tileHeight) into place; the part beyond the true size is dropped.
    /// - Returns: true when the visible part of the tile is all black (recorded in ``placeholders``).
    @discardableResult
    public mutating func place(_ tile: PixelBuffer, at index: TileIndex) -> Bool {
        let x0 = index.x * grid.tileWidth, y0 = index.y * grid.tileHeight
        let cellWidth = min(grid.tileWidth, grid.width - x0), cellHeight = min(grid.tileHeight, grid.height - y0)
        guard cellWidth > 0, cellHeight > 0 else { return false }
        let w = min(tile.width, cellWidth), h = min(tile.height, cellHeight)
        // a short tile: black around it
        if w < cellWidth || h < cellHeight { clear(x: x0, y: y0, width: cellWidth, height: cellHeight) }
        guard w > 0, h > 0 else { return false }
        let cw = canvas.width
        let tw = tile.width
        var black = true
        tile.bytes.withUnsafeBufferPointer { src in
            canvas.bytes.withUnsafeMutableBufferPointer { dst in
                for row in 0..<h {
                    let s = row * tw * 4
                    let d = ((y0 + row) * cw + x0) * 4
                    (dst.baseAddress! + d).update(from: src.baseAddress! + s, count: w * 4)
                    // Placeholder check: stops at the first pixel brighter than the threshold (at once for imagery).
                    if black {
                        var i = s
                        let end = s + w * 4
                        while i < end {
                            if src[i] > Self.blackThreshold || src[i + 1] > Self.blackThreshold
                                || src[i + 2] > Self.blackThreshold
                            {
                                black = false
                                break
                            }
                            i += 4
                        }
                    }
                }
            }
        }
        if black { placeholders.append(index) }
        return black
    }

    /// Sets a rectangle of the canvas to opaque black.
    private mutating func clear(x: Int, y: Int, width: Int, height: Int) {
        let cw = canvas.width
        canvas.bytes.withUnsafeMutableBytes { raw in
            let p = raw.bindMemory(to: UInt32.self)
            for row in y..<(y + height) {
                for i in (row * cw + x)..<(row * cw + x + width) { p[i] = RGBA(0, 0, 0, 255).packed }
            }
        }
    }

    /// The stitched image, `grid.width × grid.height`.
    public var image: PixelBuffer { canvas }
}
