// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// `lapse hyperlapse --source google` against the Map Tiles stand-in along the real Toronto–Montreal route:
/// interruption and resumption, and the errors of a networked source.
@Suite struct HyperlapseRouteCLITests {
    let dir = TestData.scratchDirectory("hyperroutecli")

    func arguments(_ world: RouteWorld, cache: String, output: String) -> [String] {
        [
            "hyperlapse", "--route", world.routeFile, "--source", "google", "--spacing", "10", "--radius", "20",
            "--size", "640x360", "--zoom", "2", "--cache-dir", cache, "-o", output
        ]
    }

    /// Paths of the tiles in a lapse cache folder, as the stand-in names them (`panoId/z/x/y`).
    func cachedTiles(_ cache: String) -> Set<String> {
        var found = Set<String>()
        let root = URL(fileURLWithPath: cache).appendingPathComponent("google")
        guard let e = FileManager.default.enumerator(atPath: root.path) else { return found }
        for case let path as String in e where path.hasSuffix(".jpg") && !path.contains("/.") {
            let parts = path.split(separator: "/") // <id>/z<zoom>/<x>_<y>.jpg
            guard parts.count == 3 else { continue }
            let xy = parts[2].dropLast(4).split(separator: "_")
            found.insert("\(parts[0])/\(parts[1].dropFirst())/\(xy[0])/\(xy[1])")
        }
        return found
    }

    /// Street View panoramas are posed as their metadata says, and the summary says why they were not stabilised:
    /// a line, and `posed_from_metadata` under `--json` with `stabilization` null (issue #43).
    @Test func streetViewIsPosedFromItsMetadataAndTheSummarySaysWhy() throws {
        let world = try RouteWorld(arguments: ["--length", "120"], in: dir)
        let cache = dir.appendingPathComponent("cache-posed").path
        let out = dir.appendingPathComponent("posed.mp4").path
        let r = try Shell.lapse(arguments(world, cache: cache, output: out) + ["-y"], environment: world.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.contains(
                """
                posed as the panoramas' metadata says, not stabilised or tone matched: Google's Map Tiles API \
                policies allow no analysis of Street View pictures
                """), "\(r.stdout)")
        let json = try Shell.lapse(
            arguments(world, cache: cache, output: out) + ["-y", "--json", "--forward", "20"],
            environment: world.environment)
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stderr.contains("warning: --forward turns only panoramas whose heading is not known"))
        let summary = try #require(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        #expect(summary["stabilization"] is NSNull)
        #expect(
            summary["posed_from_metadata"] as? String
                == "Google's Map Tiles API policies allow no analysis of Street View pictures")
    }

    /// An indoor panorama (metadata `imageryType: indoor`) in the middle of a street route is left out by default,
    /// its points counted as gaps and a warning naming it; `--include-indoor` takes it (issue #43, item 6).
    @Test func anIndoorPanoramaIsLeftOutUnlessAskedFor() throws {
        let world = try RouteWorld(arguments: ["--length", "120", "--indoor", "CAoSRoute_0002"], in: dir)
        #expect(world.panoramas.count == 5)
        let cache = dir.appendingPathComponent("cache-indoor").path
        func run(_ extra: [String]) throws -> (ProcessResult, [String: Any]) {
            let out = dir.appendingPathComponent("indoor.mp4").path
            let r = try Shell.lapse(
                arguments(world, cache: cache, output: out) + ["-y", "--json"] + extra, environment: world.environment)
            #expect(r.status == 0, "\(r.stderr)")
            return (r, try JSONSerialization.jsonObject(with: r.stdoutData) as? [String: Any] ?? [:])
        }
        let (left, summary) = try run([])
        #expect(summary["frames"] as? Int == 4, "\(summary)")
        #expect(
            left.stderr.contains(
                "warning: Google Street View pano CAoSRoute_0002 is indoor imagery: left out, its points counted as "
                    + "without coverage (--include-indoor takes it)"), "\(left.stderr)")
        let (taken, all) = try run(["--include-indoor"])
        #expect(all["frames"] as? Int == 5, "\(all)")
        #expect(!taken.stderr.contains("indoor imagery"), "\(taken.stderr)")
        #expect((summary["gaps"] as? Int ?? 0) > (all["gaps"] as? Int ?? 0))
    }

    /// Killed (SIGKILL, then SIGINT) once rendering is under way, then run again with the same cache: the output
    /// is byte-identical to an uninterrupted run, the rerun downloads exactly the tiles that were not yet in
    /// the cache (none twice), and nothing is ever left at the output path.
    @Test func interruptedAndRunAgainGivesTheSameVideoWithoutDownloadingTwice() throws {
        let world = try RouteWorld(in: dir)
        let reference = dir.appendingPathComponent("reference.mp4").path
        let full = try Shell.lapse(
            arguments(world, cache: dir.appendingPathComponent("cache-ref").path, output: reference) + ["--quiet"],
            environment: world.environment)
        #expect(full.status == 0, "\(full.stderr)")
        let allTiles = Set(try world.tilesServed(reset: true).keys)
        // Zoom 2 has 4 x 2 tiles; only those a frame's view reads are fetched (a 90° view: 2 to 4 of them), and no
        // other: no picture for the stabiliser (Google's policies allow no analysis of Street View's pictures).
        let viewTiles = allTiles.filter { $0.split(separator: "/")[1] == "2" }
        let perPanorama = Dictionary(grouping: viewTiles) { $0.split(separator: "/")[0] }.mapValues(\.count)
        #expect(
            perPanorama.count == world.panoramas.count && perPanorama.values.allSatisfy { (2...4).contains($0) },
            "\(perPanorama)")
        #expect(allTiles == viewTiles, "\(allTiles.subtracting(viewTiles).sorted())")

        for (signal, name) in [(SIGKILL, "kill"), (SIGINT, "int")] {
            let cache = dir.appendingPathComponent("cache-\(name)").path
            let out = dir.appendingPathComponent("\(name).mp4").path
            // Stopped once rendering has passed about 40% of the route.
            func rendered(_ seen: String) -> (passed: Int, points: Int) {
                guard let m = seen.matches(of: /render: (\d+)\/(\d+) route points/).last else { return (0, 0) }
                return (Int(m.output.1) ?? 0, Int(m.output.2) ?? 0)
            }
            let (process, seen) = try Shell.lapseStopped(
                arguments(world, cache: cache, output: out), environment: world.environment,
                signal: signal
            ) { s in
                let r = rendered(s)
                return r.points != 0 && r.passed * 5 >= r.points * 2
            }
            let (passed, points) = rendered(seen)
            #expect(process.terminationReason == (signal == SIGKILL ? .uncaughtSignal : .exit), "\(name)")
            if signal == SIGINT { #expect(process.terminationStatus == 130) }
            #expect(passed * 5 >= points * 2 && passed < points, "\(name): \(seen)")
            #expect(!FileManager.default.fileExists(atPath: out), "\(name): something at the output path")
            func partials() throws -> [String] {
                // Beside the output, and the cache entries being written.
                let writing = (try? FileManager.default.contentsOfDirectory(atPath: cache + "/.partial")) ?? []
                return try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("partial") }
                    + writing
            }
            // SIGINT cleans up; SIGKILL cannot (the rerun removes what it left).
            let left = try partials()
            #expect(left.isEmpty == (signal == SIGINT), "\(name): \(left)")
            let firstRun = Set(try world.tilesServed(reset: true).keys)
            let cachedAfterStop = cachedTiles(cache)
            #expect(!cachedAfterStop.isEmpty && cachedAfterStop.isSubset(of: firstRun))

            let again = try Shell.lapse(
                arguments(world, cache: cache, output: out) + ["--quiet", "--json"], environment: world.environment)
            #expect(again.status == 0, "\(name): \(again.stderr)")
            let summary = try JSONSummary.parse(again.stdoutData) ?? [:]
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: out)) == Data(contentsOf: URL(fileURLWithPath: reference)),
                "\(name)")
            let leftAfterRerun = try partials()
            #expect(leftAfterRerun.isEmpty, "\(name): \(leftAfterRerun)")
            let rerun = try world.tilesServed(reset: true)
            #expect(rerun.values.allSatisfy { $0 == 1 }, "\(name)")
            #expect(Set(rerun.keys).isDisjoint(with: cachedAfterStop), "\(name): a cached tile was downloaded again")
            #expect(Set(rerun.keys).union(cachedAfterStop) == allTiles, "\(name)")
            // The summary tells the cache's part.
            #expect(
                summary["tiles_downloaded"] as? Int == rerun.count
                    && summary["tiles_from_cache"] as? Int == cachedAfterStop.count,
                "\(name): \(summary)")
        }
    }

    @Test func errorsAreOneLineAndWriteNothing() throws {
        let world = try RouteWorld(in: dir)
        let routes = TestData.scratchDirectory("hyperroutecli-routes")
        let munich = routes.appendingPathComponent("munich.txt").path
        try "48.1000,11.5000\n48.1030,11.5000\n".write(toFile: munich, atomically: true, encoding: .utf8)
        let garbage = routes.appendingPathComponent("garbage.gpx").path
        try "<gpx><trk><trkseg><trkpt lat=\"x\"".write(toFile: garbage, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("e.mp4").path
        let cases: [(args: [String], env: [String: String], message: String)] = [
            (
                ["--route", munich, "-o", out], world.environment,
                "Google Street View: no panoramas along the route (35 points looked up, none covered)"
            ),
            (
                ["--route", world.routeFile, "-o", out],
                ["GOOGLE_MAPS_API_KEY": "", "LAPSE_MAPTILES_URL": world.baseURL], "no API key"
            ),
            (["--route", "/nonexistent/route.gpx", "-o", out], world.environment, "/nonexistent/route.gpx: "),
            (["--route", garbage, "-o", out], world.environment, "garbage.gpx: "),
            (
                ["--route", world.routeFile, "-o", "/nonexistent/dir/x.mp4"], world.environment,
                "directory /nonexistent/dir does not exist"
            )
        ]
        for c in cases {
            let before = try world.stats()["total"] as? Int ?? -1
            let r = try Shell.lapse(
                ["hyperlapse", "--source", "google"] + c.args
                    + ["--cache-dir", dir.appendingPathComponent("cache").path], environment: c.env)
            #expect(r.status == 1, "\(c.args): \(r.stderr)")
            let errors = r.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }
            #expect(errors.count == 1 && r.stderr.contains(c.message), "\(c.args): \(r.stderr)")
            #expect(!r.stderr.contains(RouteWorld.key))
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: dir.path).filter {
                    !$0.hasPrefix("cache") && $0 != "toronto-start.txt"
                }.isEmpty,
                "\(c.args)")
            if c.message.contains("does not exist") || c.message.contains("no API key") {
                #expect(
                    try world.stats()["total"] as? Int == before, "no request before the output and key are checked")
            }
        }
    }

    /// An output folder that does not exist fails before the directions request, not after it.
    @Test func missingOutputFolderFailsBeforeTheRouteIsPlanned() throws {
        let directions = try LocalServer(script: "directions_standin.py")
        let r = try Shell.lapse(
            [
                "hyperlapse", "--from", "43.6534,-79.3839", "--to", "45.5019,-73.5674", "--source", "google",
                "-o", "/nonexistent/dir/x.mp4"
            ],
            environment: [
                "GOOGLE_MAPS_API_KEY": RouteWorld.key,
                "LAPSE_GOOGLE_ROUTES_URL": directions.baseURL + "/toronto_montreal"
            ])
        #expect(r.status == 1 && r.stderr.contains("does not exist"), "\(r.stderr)")
        let requests = try Shell.run("curl", ["-s", directions.baseURL + "/_requests"])
        #expect(requests.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(requests.stdout)")
    }
}
