// SPDX-License-Identifier: GPL-3.0-or-later
import LapseMedia
import LapsePanorama
import Testing

@Suite struct TileGridTests {
    /// docs/ARCHITECTURE.md: zoom → size and tiles for both families.
    @Test(arguments: [
        (16384, 0, 512, 256, 1, 1), (16384, 1, 1024, 512, 2, 1), (16384, 2, 2048, 1024, 4, 2),
        (16384, 3, 4096, 2048, 8, 4), (16384, 4, 8192, 4096, 16, 8), (16384, 5, 16384, 8192, 32, 16),
        (13312, 0, 416, 208, 1, 1), (13312, 1, 832, 416, 2, 1), (13312, 2, 1664, 832, 4, 2),
        (13312, 3, 3328, 1664, 7, 4), (13312, 4, 6656, 3328, 13, 7), (13312, 5, 13312, 6656, 26, 13)
    ])
    func gridMatchesTheTable(full: Int, zoom: Int, width: Int, height: Int, columns: Int, rows: Int) {
        let g = TileGrid(zoom: zoom, fullWidth: full, fullHeight: full / 2)
        #expect(g.width == width && g.height == height && g.columns == columns && g.rows == rows)
        #expect(g.tiles.count == columns * rows)
    }

    /// The documented rule for any size: zoom 5 is the full resolution, zoom z is `imageWidth >> (5 − z)` wide.
    @Test(arguments: [
        (7680, 3840, 0, 240, 120, 1, 1), (7680, 3840, 2, 960, 480, 2, 1), (7680, 3840, 3, 1920, 960, 4, 2),
        (7680, 3840, 4, 3840, 1920, 8, 4), (7680, 3840, 5, 7680, 3840, 15, 8), (2048, 1024, 5, 2048, 1024, 4, 2),
        (2048, 1024, 0, 64, 32, 1, 1)
    ])
    func photosphereSizesFollowTheDocumentedRule(
        full: Int, fullHeight: Int, zoom: Int, width: Int, height: Int,
        columns: Int, rows: Int
    ) {
        let g = TileGrid(zoom: zoom, fullWidth: full, fullHeight: fullHeight)
        #expect(g.width == width && g.height == height && g.columns == columns && g.rows == rows)
        #expect(g.contains(TileIndex(zoom: zoom, x: columns - 1, y: rows - 1)))
        #expect(
            !g.contains(TileIndex(zoom: zoom, x: columns, y: 0)) && !g.contains(TileIndex(zoom: zoom, x: 0, y: rows)))
    }

    @Test func zoomIsClampedToZeroThroughFive() {
        #expect(TileGrid.highestZoom == 5)
        #expect(TileGrid(zoom: 9, fullWidth: 13312, fullHeight: 6656).zoom == 5)
        #expect(TileGrid(zoom: 9, fullWidth: 7680, fullHeight: 3840).width == 7680)
        #expect(TileGrid(zoom: -1, fullWidth: 7680, fullHeight: 3840).width == 240)
        #expect(TileGrid.zoom(forWidth: 1000, fullWidth: 7680, fullHeight: 3840) == 3)
        #expect(TileGrid.zoom(forWidth: 99999, fullWidth: 7680, fullHeight: 3840) == 5)
    }

    @Test(arguments: [(1, 0), (416, 0), (417, 1), (1000, 2), (1920, 3), (3328, 3), (4000, 4), (99999, 5)])
    func autoZoomPicksTheSmallestWideEnough(width: Int, zoom: Int) {
        #expect(TileGrid.zoom(forWidth: width, fullWidth: 13312, fullHeight: 6656) == zoom)
    }

    @Test func stitcherCropsPaddingAndSpotsBlackTiles() {
        let grid = TileGrid(zoom: 3, fullWidth: 13312, fullHeight: 6656) // 3328×1664 in 7×4 tiles
        var s = TileStitcher(grid: grid)
        let grey = PixelBuffer(width: 512, height: 512, fill: RGBA(100, 120, 140))
        let black = PixelBuffer(width: 512, height: 512, fill: RGBA(2, 1, 3))
        for t in grid.tiles where t != TileIndex(zoom: 3, x: 2, y: 1) { s.place(grey, at: t) }
        #expect(s.placeholders.isEmpty)
        let wasBlack = s.place(black, at: TileIndex(zoom: 3, x: 2, y: 1))
        #expect(wasBlack)
        #expect(s.placeholders == [TileIndex(zoom: 3, x: 2, y: 1)])
        #expect(s.image.width == 3328 && s.image.height == 1664)
        #expect(s.image[3327, 1663] == RGBA(100, 120, 140))
        // An edge tile whose visible part is imagery but whose padding is black is not a placeholder.
        var edge = PixelBuffer(width: 512, height: 512)
        for y in 0..<512 { for x in 0..<256 { edge[x, y] = RGBA(90, 90, 90) } }
        let edgeBlack = s.place(edge, at: TileIndex(zoom: 3, x: 6, y: 0))
        #expect(!edgeBlack)
    }

    /// The same on a Y′CbCr canvas: padding cropped, the black tile spotted (its R′G′B′ within the threshold), the
    /// edge tile with black padding not, a short tile black around it, the pixels where they belong.
    @Test func yuvStitcherCropsPaddingAndSpotsBlackTiles() throws {
        let grid = TileGrid(zoom: 3, fullWidth: 13312, fullHeight: 6656) // 3328×1664 in 7×4 tiles
        var s = TileStitcher(yuvGrid: grid)
        let grey = try YUVFrame(rgba: PixelBuffer(width: 512, height: 512, fill: RGBA(100, 120, 140)))
        let black = try YUVFrame(rgba: PixelBuffer(width: 512, height: 512, fill: RGBA(2, 1, 3)))
        let short = try YUVFrame(rgba: PixelBuffer(width: 256, height: 256, fill: RGBA(100, 120, 140)))
        for t in grid.tiles where t != TileIndex(zoom: 3, x: 2, y: 1) && t != TileIndex(zoom: 3, x: 3, y: 2) {
            s.place(yuv: grey, at: t)
        }
        #expect(s.placeholders.isEmpty)
        let wasBlack = s.place(yuv: black, at: TileIndex(zoom: 3, x: 2, y: 1))
        let shortWasBlack = s.place(yuv: short, at: TileIndex(zoom: 3, x: 3, y: 2))
        #expect(wasBlack && !shortWasBlack)
        #expect(s.placeholders == [TileIndex(zoom: 3, x: 2, y: 1)])
        let image = try #require(s.yuvImage)
        #expect(image.width == 3328 && image.height == 1664)
        let rgba = try image.rgba()
        func near(_ p: RGBA, _ q: RGBA) -> Bool {
            abs(Int(p.r) - Int(q.r)) <= 2 && abs(Int(p.g) - Int(q.g)) <= 2 && abs(Int(p.b) - Int(q.b)) <= 2
        }
        #expect(near(rgba[3327, 1663], RGBA(100, 120, 140)), "\(rgba[3327, 1663])")
        #expect(near(rgba[2 * 512 + 100, 512 + 100], RGBA(2, 1, 3)))
        #expect(near(rgba[3 * 512 + 100, 2 * 512 + 100], RGBA(100, 120, 140)))
        #expect(near(rgba[3 * 512 + 400, 2 * 512 + 400], RGBA(0, 0, 0))) // around the short tile
        var edge = PixelBuffer(width: 512, height: 512)
        for y in 0..<512 { for x in 0..<256 { edge[x, y] = RGBA(90, 90, 90) } }
        let edgeBlack = s.place(yuv: try YUVFrame(rgba: edge), at: TileIndex(zoom: 3, x: 6, y: 0))
        #expect(!edgeBlack)
    }
}
