// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import Synchronization
import TestSupport
import Testing

/// A hyperlapse through Google's two panorama sizes and a user photosphere (`maptiles_standin.py`: 16384, 13312
/// and 7680 wide, and a 16384-wide one whose zoom 3 is missing), against the documented zoom rule.
@Suite struct HyperlapseTileSizesTests {
    let dir = TestData.scratchDirectory("hypersizes")
    static let key = "sizes-test-key-AIzaSy0077"

    /// Every tile asked for lies in its zoom's grid (`imageWidth >> (5 − z)` wide, 512-pixel tiles), so the API
    /// answers no error; the zoom of each panorama is the one its size gives for the frame; the panorama whose
    /// zoom 3 is missing falls back to zoom 2 and is counted; the one with no imagery at any zoom loses its frame,
    /// not the job, and a warning names it.
    @Test func onlyDocumentedTilesAreRequested() async throws {
        let server = try LocalServer(
            script: "maptiles_standin.py",
            arguments: [
                "--key", Self.key, "--data", TestData.path("pano360"),
                "--workdir",
                FileManager.default.temporaryDirectory.appendingPathComponent("lapse-maptiles-standin-v1").path
            ])
        // North past the 16384- and 13312-wide panoramas, east, then south past the gapped one and the photosphere.
        let route = dir.appendingPathComponent("route.txt").path
        try "55.70000,13.19000\n55.70050,13.19000\n55.70050,13.19500\n55.70000,13.19500\n"
            .write(toFile: route, atomically: true, encoding: .utf8)
        var s = HyperlapseSettings()
        s.route = URL(fileURLWithPath: route)
        s.source = .google
        s.spacing = 10
        s.radius = 8
        s.size = FrameSize(width: 1280, height: 720) // auto zoom: at least 3840 px of panorama
        s.stabilize = false
        s.cacheDir = dir.appendingPathComponent("cache")
        s.output = dir.appendingPathComponent("sizes.mp4")
        let feed = try await s.makeFeed(environment: [
            "GOOGLE_MAPS_API_KEY": Self.key, "LAPSE_MAPTILES_URL": server.baseURL
        ])
        let warnings = Mutex<[String]>([])
        let summary = try await s.makeJob(overwrite: false).run(
            feed: feed, warning: { w in warnings.withLock { $0.append(w) } })
        #expect(summary.panoramas == 4 && summary.frames == 4)
        #expect(summary.panoramasAtLowerZoom == 1 && summary.panoramasUnavailable == 1)
        let said = warnings.withLock { $0 }
        #expect(
            said.count == 1 && said[0].hasPrefix("Google Street View pano CAoSGone_pano-6: ")
                && said[0].hasSuffix("its frame is left out"),
            "\(said)")

        let log = try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_log")!, as: [String].self)
        // "panoId z/x/y status"
        var zooms: [String: Set<Int>] = [:]
        for line in log {
            let parts = line.split(separator: " ")
            let tile = parts[1].split(separator: "/").compactMap { Int($0) }
            let (id, z, x, y, status) = (String(parts[0]), tile[0], tile[1], tile[2], String(parts[2]))
            let full: (Int, Int) =
                id.contains("Photosphere") ? (7680, 3840) : id.contains("OldFamily") ? (13312, 6656) : (16384, 8192)
            let grid = TileGrid(zoom: z, fullWidth: full.0, fullHeight: full.1)
            #expect(grid.contains(TileIndex(zoom: z, x: x, y: y)), "\(line) outside \(grid)")
            #expect(
                status == "200" || (id.contains("Gapped") && z == 3 && status == "404")
                    || (id.contains("Gone") && status == "404"),
                "\(line)")
            if status == "200" { zooms[id, default: []].insert(z) }
        }
        // 3840 px: zoom 3 (4096) of the 16384-wide, zoom 4 (6656) of the 13312-wide, zoom 4 (3840, not the 8192 a
        // width-from-512 rule would ask for) of the 7680-wide photosphere; the gapped one from zoom 2 after its zoom 3
        // answered NOT_FOUND.
        #expect(
            zooms == [
                "CAoSNewFamily_pano-1": [3], "CAoSOldFamily_pano-2": [4], "CAoSPhotosphere_pano-4": [4],
                "CAoSGapped_pano-5": [2]
            ], "\(zooms)")
    }
}
