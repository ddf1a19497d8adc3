// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia

/// Assembles decoded tiles into one equirectangular image (RGBA, or Y′CbCr for a caller that renders it), cropping
/// the padding, and spots all-black placeholder tiles (HTTP 200 with a black JPEG is how Google answers for tiles it
/// has no imagery for).
public struct TileStitcher: Sendable {
    /// The grid of the zoom being stitched.
    public let grid: TileGrid
    private var canvas: PixelBuffer
    private var yuvCanvas: YUVFrame?
    /// Tiles whose visible part (inside the true image size) was all black.
    public private(set) var placeholders: [TileIndex] = []

    /// The largest channel value a pixel of a placeholder tile may have (JPEG noise on pure black stays ≤ 3).
    public static let blackThreshold: UInt8 = 6

    /// A canvas whose pixels are unset until tiles are placed (placing every tile of the grid sets them all).
    public init(grid: TileGrid) {
        self.grid = grid
        canvas = PixelBuffer(uninitializedWidth: grid.width, height: grid.height)
    }

    /// A Y′CbCr canvas (BT.709 limited range 4:2:0), its pixels unset until tiles are placed (``place(yuv:at:)``).
    public init(yuvGrid grid: TileGrid) {
        self.grid = grid
        canvas = PixelBuffer(uninitializedWidth: 1, height: 1)
        yuvCanvas = YUVFrame(uninitializedWidth: grid.width, height: grid.height)
    }

    /// Copies `tile` (RGBA, normally tileWidth × tileHeight) into place; the part beyond the true size is dropped.
    /// - Returns: true when the visible part of the tile is all black (recorded in ``placeholders``).
    @discardableResult
    public mutating func place(_ tile: PixelBuffer, at index: TileIndex) -> Bool {
        guard
            let (x0, y0, w, h) = Self.cell(
                grid, index, tile.width, tile.height, clear: { clear(x: $0, y: $1, width: $2, height: $3) })
        else { return false }
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

    /// Copies a Y′CbCr `tile` (BT.709 limited range 4:2:0) into place, as ``place(_:at:)`` does an RGBA one; a
    /// placeholder is a tile whose visible luma is all within ``blackThreshold`` of black (16) and its chroma as
    /// near grey. Only on a canvas made by ``init(yuvGrid:)``.
    @discardableResult
    public mutating func place(yuv tile: YUVFrame, at index: TileIndex) -> Bool {
        precondition(yuvCanvas != nil, "place(yuv:at:) on an RGBA canvas")
        guard
            let (x0, y0, w, h) = Self.cell(
                grid, index, tile.width, tile.height, clear: { clearYUV(x: $0, y: $1, width: $2, height: $3) })
        else { return false }
        // Black within the threshold of R′G′B′ 0: luma 16 + 219/255 of it, chroma 224/255 of it off grey.
        let lumaLimit = UInt8(16 + (Int(Self.blackThreshold) * 219 + 254) / 255)
        let chromaLimit = (Int(Self.blackThreshold) * 224 + 254) / 255
        var black = true
        var canvas = yuvCanvas!
        yuvCanvas = nil // no second reference while the planes are written
        func copy(
            _ src: [UInt8], _ srcWidth: Int, into dst: inout [UInt8], _ dstWidth: Int,
            x: Int, y: Int, width: Int, height: Int, isBlack: (UInt8) -> Bool
        ) {
            src.withUnsafeBufferPointer { s in
                dst.withUnsafeMutableBufferPointer { d in
                    for row in 0..<height {
                        let from = s.baseAddress! + row * srcWidth
                        (d.baseAddress! + (y + row) * dstWidth + x).update(from: from, count: width)
                        if black {
                            for i in 0..<width where !isBlack(from[i]) {
                                black = false
                                break
                            }
                        }
                    }
                }
            }
        }
        copy(tile.y, tile.width, into: &canvas.y, canvas.width, x: x0, y: y0, width: w, height: h) { $0 <= lumaLimit }
        let cw = (w + 1) / 2
        let ch = (h + 1) / 2
        let grey: (UInt8) -> Bool = { abs(Int($0) - 128) <= chromaLimit }
        copy(
            tile.cb, tile.chromaWidth, into: &canvas.cb, canvas.chromaWidth, x: x0 / 2, y: y0 / 2, width: cw,
            height: ch, isBlack: grey)
        copy(
            tile.cr, tile.chromaWidth, into: &canvas.cr, canvas.chromaWidth, x: x0 / 2, y: y0 / 2, width: cw,
            height: ch, isBlack: grey)
        yuvCanvas = canvas
        if black { placeholders.append(index) }
        return black
    }

    /// Where tile `index` goes: its corner and the size of it that is kept (the part beyond the true image size is
    /// dropped); a tile shorter than its cell gets black around it first (`clear`). Nil when nothing of it shows.
    private static func cell(
        _ grid: TileGrid, _ index: TileIndex, _ tileWidth: Int, _ tileHeight: Int,
        clear: (_ x: Int, _ y: Int, _ width: Int, _ height: Int) -> Void
    ) -> (x: Int, y: Int, width: Int, height: Int)? {
        let x0 = index.x * grid.tileWidth
        let y0 = index.y * grid.tileHeight
        let cellWidth = min(grid.tileWidth, grid.width - x0)
        let cellHeight = min(grid.tileHeight, grid.height - y0)
        guard cellWidth > 0, cellHeight > 0 else { return nil }
        let w = min(tileWidth, cellWidth)
        let h = min(tileHeight, cellHeight)
        if w < cellWidth || h < cellHeight { clear(x0, y0, cellWidth, cellHeight) }
        guard w > 0, h > 0 else { return nil }
        return (x0, y0, w, h)
    }

    /// Sets a rectangle of the Y′CbCr canvas (even corner) to black.
    private mutating func clearYUV(x: Int, y: Int, width: Int, height: Int) {
        let w = yuvCanvas!.width
        let cw = yuvCanvas!.chromaWidth
        for row in y..<(y + height) { for i in 0..<width { yuvCanvas!.y[row * w + x + i] = 16 } }
        for row in (y / 2)..<((y + height + 1) / 2) {
            for i in 0..<((width + 1) / 2) {
                yuvCanvas!.cb[row * cw + x / 2 + i] = 128
                yuvCanvas!.cr[row * cw + x / 2 + i] = 128
            }
        }
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

    /// The stitched image, `grid.width × grid.height` (on an RGBA canvas).
    public var image: PixelBuffer { canvas }
    /// The stitched Y′CbCr image, `grid.width × grid.height` (on a canvas made by ``init(yuvGrid:)``).
    public var yuvImage: YUVFrame? { yuvCanvas }
}
