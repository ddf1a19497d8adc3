// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// `--source mapillary` from the command line, against the Mapillary stand-in (Tests/Fixtures/mapillary_standin.py):
/// the token comes from `MAPILLARY_ACCESS_TOKEN`, goes to the API only, and is written nowhere.
@Suite struct MapillaryCLITests {
    let dir = TestData.scratchDirectory("mlycli")
    static let token = MapillaryStandIn.token

    func server(_ arguments: [String] = []) throws -> LocalServer { try MapillaryStandIn.server(arguments) }

    func route() throws -> String { try MapillaryStandIn.walkRoute(in: dir) }

    /// Every file under `folder` (recursively) whose bytes contain `needle`.
    static func files(under folder: URL, containing needle: String) -> [String] {
        let bytes = Data(needle.utf8)
        var hits: [String] = []
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = walker?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                let data = try? Data(contentsOf: url)
            else { continue }
            if data.range(of: bytes) != nil { hits.append(url.path) }
        }
        return hits
    }

    /// A hyperlapse with a GIF, a report and its job file, the panoramas exported, and a preview: each works, and
    /// no file any of them wrote (outputs, job file, manifest, report pages, the cache) nor anything they printed
    /// holds the token. The hyperlapse has a frame per photo; `panoramas` exports the originals (5760 wide) at
    /// `--width 4096`.
    @Test func everyCommandWorksAndNoFileHoldsTheToken() throws {
        let server = try server()
        let env = ["MAPILLARY_ACCESS_TOKEN": Self.token, "LAPSE_MAPILLARY_URL": server.baseURL]
        let cache = dir.appendingPathComponent("cache").path
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let hyper = try Shell.lapse(
            [
                "hyperlapse", "--route", try route(), "--source", "mapillary", "--spacing", "1", "--radius", "4",
                "--size", "480x270", "--gif", out.appendingPathComponent("walk.gif").path, "--report",
                out.appendingPathComponent("walk.html").path, "--cache-dir", cache, "-o",
                out.appendingPathComponent("walk.mp4").path, "--json"
            ], environment: env)
        #expect(hyper.status == 0, "\(hyper.stderr)")
        let summary = try #require(try JSONSummary.parse(Data(hyper.stdout.utf8)))
        #expect(summary["frames"] as? Int == 5, "\(hyper.stdout)")
        let credits = try String(contentsOf: out.appendingPathComponent("walk.credits.txt"), encoding: .utf8)
        #expect(credits.contains("- Mapillary — by ada_walks — CC BY-SA 4.0\n"), "\(credits)")

        let panos = try Shell.lapse(
            [
                "panoramas", "--route", try route(), "--source", "mapillary", "--spacing", "1", "--radius", "4",
                "--width", "4096", "--cache-dir", cache, "-o", out.appendingPathComponent("panos").path
            ], environment: env)
        #expect(panos.status == 0, "\(panos.stderr)")
        let exported = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("panos").path)
            .filter { $0.hasSuffix(".jpg") }.sorted()
        #expect(exported.count == 5, "\(exported)")
        if let first = exported.first {
            let size = try FFmpegReference.dimensions(out.appendingPathComponent("panos/" + first).path)
            #expect(size == (4096, 2048), "\(size)")
        }

        let preview = try Shell.lapse(
            [
                "preview", "--route", try route(), "--source", "mapillary", "--spacing", "1", "--radius", "4",
                "--cache-dir", cache, "--report", out.appendingPathComponent("preview.html").path
            ], environment: env)
        #expect(preview.status == 0, "\(preview.stderr)")

        #expect(Self.files(under: out, containing: Self.token).isEmpty)
        #expect(Self.files(under: URL(fileURLWithPath: cache), containing: Self.token).isEmpty)
        // The token's secret part alone, as a URL would carry it encoded, is nowhere either.
        #expect(Self.files(under: dir, containing: "standinstandinstandin0000").isEmpty)
        for r in [hyper, panos, preview] {
            #expect(!r.stdout.contains("standinstandin") && !r.stderr.contains("standinstandin"))
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(Set(["walk.mp4", "walk.gif", "walk.html", "walk.job.json", "preview.html"]).isSubset(of: written))
    }

    /// A token the API refuses: exit 1 and one line naming Mapillary and MAPILLARY_ACCESS_TOKEN, without the token;
    /// no token at all says where to get one; nothing is written.
    @Test func aBadOrMissingTokenIsOneLine() throws {
        let server = try server()
        let bad = "MLY|1111|not-the-token-qq7"
        let output = dir.appendingPathComponent("bad.mp4").path
        let args = [
            "hyperlapse", "--route", try route(), "--source", "mapillary", "--radius", "4", "--cache-dir",
            dir.appendingPathComponent("cache-bad").path, "-o", output
        ]
        let refused = try Shell.lapse(
            args, environment: ["MAPILLARY_ACCESS_TOKEN": bad, "LAPSE_MAPILLARY_URL": server.baseURL])
        #expect(refused.status == 1, "\(refused.stderr)")
        let lines = refused.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(
            lines.count == 1 && lines[0].contains("Mapillary") && lines[0].contains("MAPILLARY_ACCESS_TOKEN"),
            "\(refused.stderr)")
        #expect(!refused.stderr.contains("not-the-token"), "\(refused.stderr)")

        let missing = try Shell.lapse(
            args, environment: ["MAPILLARY_ACCESS_TOKEN": "", "LAPSE_MAPILLARY_URL": server.baseURL])
        #expect(missing.status == 1, "\(missing.stderr)")
        #expect(
            missing.stderr.hasPrefix(
                "error: Mapillary: no access token: set MAPILLARY_ACCESS_TOKEN to a client token (MLY|…, free from "
                    + "https://www.mapillary.com/dashboard/developers)\n"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))

        // The token never goes in clear to another machine: an http API URL that is not this machine's is refused.
        let clear = try Shell.lapse(
            args, environment: ["MAPILLARY_ACCESS_TOKEN": Self.token, "LAPSE_MAPILLARY_URL": "http://mirror.example"])
        #expect(clear.status == 64, "\(clear.stderr)")
        #expect(
            clear.stderr.hasPrefix(
                "error: LAPSE_MAPILLARY_URL must be an https URL (the access token would travel in clear); plain "
                    + "http only to this machine (127.0.0.1, localhost)\n"),
            "\(clear.stderr)")
    }

    /// Offline (nothing listens at the API's address): exit 1 with a network error at once, not after retries.
    @Test func offlineFailsAtOnce() throws {
        let started = Date()
        let r = try Shell.lapse(
            [
                "hyperlapse", "--route", try route(), "--source", "mapillary", "--radius", "4", "--cache-dir",
                dir.appendingPathComponent("cache-offline").path, "-o", dir.appendingPathComponent("offline.mp4").path
            ], environment: ["MAPILLARY_ACCESS_TOKEN": Self.token, "LAPSE_MAPILLARY_URL": "http://127.0.0.1:9"])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("127.0.0.1:9") && r.stderr.contains("connection refused"), "\(r.stderr)")
        // One attempt: no backoff between retries (the client fails a host it never reached at once).
        #expect(!r.stderr.contains("attempts"), "\(r.stderr) after \(Date().timeIntervalSince(started)) s")
    }
}
