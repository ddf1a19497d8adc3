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

    public init(grid: TileGrid) {
        self.grid = grid
        canvas = PixelBuffer(width: grid.width, height: grid.height)
    }

    /// Copies `tile` (RGBA, normally tileWidth × tileHeight) into place; the part beyond the true size is dropped.
    /// - Returns: true when the visible part of the tile is all black (recorded in ``placeholders``).
    @discardableResult
    public mutating func place(_ tile: PixelBuffer, at index: TileIndex) -> Bool {
        let x0 = index.x * grid.tileWidth, y0 = index.y * grid.tileHeight
        let w = min(tile.width, grid.width - x0), h = min(tile.height, grid.height - y0)
        guard w > 0, h > 0 else { return false }
        var maxValue: UInt8 = 0
        let cw = canvas.width
        tile.bytes.withUnsafeBufferPointer { src in
            canvas.bytes.withUnsafeMutableBufferPointer { dst in
                for row in 0..<h {
                    let s = row * tile.width * 4
                    let d = ((y0 + row) * cw + x0) * 4
                    for i in 0..<(w * 4) {
                        let v = src[s + i]
                        dst[d + i] = v
                        if i & 3 != 3 && v > maxValue { maxValue = v }
                    }
                }
            }
        }
        let black = maxValue <= Self.blackThreshold
        if black { placeholders.append(index) }
        return black
    }

    /// The stitched image, `grid.width × grid.height`.
    public var image: PixelBuffer { canvas }
}
