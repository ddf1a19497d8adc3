// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseNet
import TestSupport

@testable import LapsePanorama

/// The Map Tiles API stand-in and the world it serves (see Tests/Fixtures/maptiles_standin.py).
enum MapTilesWorld {
    static let key = "test-key-AIzaSyStandIn0123"
    static let newFamily = "CAoSNewFamily_pano-1"
    static let oldFamily = "CAoSOldFamily_pano-2"
    static let dark = "CAoSDark_pano-3"
    static let photosphere = "CAoSPhotosphere_pano-4"
    static let gapped = "CAoSGapped_pano-5"
    static let newSource = TestData.path("pano360/trekview_360/GSAG2002.JPG")
    static let oldSource = TestData.path("pano360/trekview_360/R0014760.JPG")
    static let newPosition = Coordinate(uncheckedLatitude: 55.70000, longitude: 13.19000)
    static let oldPosition = Coordinate(uncheckedLatitude: 55.70050, longitude: 13.19000)
    static let darkPosition = Coordinate(uncheckedLatitude: 55.70100, longitude: 13.19000)

    /// Tiles are cut once per machine into this folder and shared by every stand-in (made atomically).
    static let workdir = FileManager.default.temporaryDirectory.appendingPathComponent("lapse-maptiles-standin-v1").path

    static func server(
        faults: Double = 0, key: String = key, sessionRequests: Int = 0, quotaErrors: Int = 0,
        cacheControl: String = "private, max-age=86400", corrupt: Double = 0,
        corruptAttempts: Int = 1
    ) throws -> LocalServer {
        try LocalServer(
            script: "maptiles_standin.py",
            arguments: [
                "--key", key, "--faults", String(faults), "--retry-after", "1", "--stall", "30",
                "--data", TestData.path("pano360"), "--workdir", workdir, "--session-requests", String(sessionRequests),
                "--quota-errors", String(quotaErrors), "--cache-control", cacheControl, "--corrupt", String(corrupt),
                "--corrupt-attempts", String(corruptAttempts)
            ])
    }

    static func client(limit: Int = 8, timeout: Double = 20, attempts: Int = 6) -> HTTPClient {
        var c = HTTPClient.Configuration()
        c.maxConcurrentRequests = limit
        c.requestTimeout = timeout
        c.baseDelay = 0.1
        c.maxDelay = 0.5
        c.maxAttempts = attempts
        return HTTPClient(configuration: c)
    }

    static func source(
        _ server: LocalServer, key: String = key, client: HTTPClient = client(),
        cache: DiskCache? = nil
    ) throws -> GoogleStreetViewSource {
        try GoogleStreetViewSource(apiKey: key, baseURL: URL(string: server.baseURL)!, client: client, cache: cache)
    }

    struct Stats: Decodable {
        var total: Int
        var maxInFlight: Int
        var byKind: [String: Int]
        var faults: Int
        var tiles: Int { byKind["tiles"] ?? 0 }
        enum CodingKeys: String, CodingKey {
            case total, faults
            case maxInFlight = "max_in_flight"
            case byKind = "by_kind"
        }
    }

    static func stats(_ server: LocalServer) async throws -> Stats {
        try await HTTPClient.shared.getJSON(URL(string: server.baseURL + "/_stats")!, as: Stats.self)
    }
}

/// Points along a line north from `start`, `spacing` metres apart.
func routePoints(from start: Coordinate, count: Int, spacing: Double) -> [RoutePoint] {
    (0..<count).map { i in
        RoutePoint(
            coordinate: start.destination(bearing: 0, distance: Double(i) * spacing),
            distanceAlongRoute: Double(i) * spacing, heading: 0)
    }
}

/// One frame decoded by the ffmpeg CLI to RGBA through a file (large frames through a pipe are slow to take in,
/// as `Shell.run` also turns stdout into a String).
func ffmpegRaw(_ input: String, filters: String, width: Int, height: Int, inputOptions: [String] = []) throws
    -> PixelBuffer
{
    let dir = TestData.scratchDirectory("ffraw")
    defer { try? FileManager.default.removeItem(at: dir) }
    let out = dir.appendingPathComponent("frame.rgba").path
    let r = try Shell.run(
        "ffmpeg",
        ["-v", "error", "-nostdin", "-y"] + inputOptions + [
            "-i", input, "-vf", filters + ",scale=\(width):\(height)",
            "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgba", out
        ])
    guard r.status == 0 else { throw LapseError(.other, "ffmpeg reference", "ffmpeg failed: \(r.stderr)") }
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
    guard bytes.count == width * height * 4 else {
        throw LapseError(.other, "ffmpeg reference", "ffmpeg gave \(bytes.count) bytes")
    }
    return PixelBuffer(width: width, height: height, bytes: bytes)
}
