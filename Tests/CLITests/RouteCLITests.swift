// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseGeo
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `lapse route` end to end: files in, directions from the stand-in (`Tests/Fixtures/directions_standin.py`), errors.
@Suite struct RouteCLITests {
    static let key = "AIzaCLITESTKEY-0987654321"
    let dir = TestData.scratchDirectory("lapse-route-cli")

    /// A route of more points than a job takes is refused at once, in little memory, naming the limit (issue #42: a
    /// 277-byte pole-to-pole GPX made `preview` build 4 million points, 3.9 GB and a 321 MB page); with a spacing
    /// that keeps it under the limit the same file is planned.
    @Test func aRouteOfTooManyPointsIsRefused() throws {
        let gpx = dir.appendingPathComponent("pole-to-pole.gpx").path
        try """
        <gpx><trk><trkseg><trkpt lat="-89.9" lon="0"/><trkpt lat="0" lon="0"/><trkpt lat="89.9" lon="0"/>\
        </trkseg></trk></gpx>
        """.write(toFile: gpx, atomically: true, encoding: .utf8)
        let photos = "local:" + TestData.path("pano360/geovisio_gopromax_walk")
        let page = dir.appendingPathComponent("pole.html").path
        let (r, kB) = try Shell.lapseMeasured(["preview", "--route", gpx, "--source", photos, "-o", page, "-y"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(
            r.stderr.contains("a point every 10 m along 19992 km is more than 500000 points (the most a job takes)"),
            "\(r.stderr)")
        #expect(kB < 200 * 1024, "peak \(kB) kB")
        #expect(!FileManager.default.fileExists(atPath: page))
        let out = dir.appendingPathComponent("pole.gpx").path
        let resampled = try Shell.lapse(["route", "--input", gpx, "--spacing", "40000", "-o", out, "-y"])
        #expect(resampled.status == 0, "\(resampled.stderr)")
        #expect(try RouteFile.read(URL(fileURLWithPath: out)).points.count == 501)
    }

    /// `--smoothing` changes the headings written with a resampled route (it changed nothing: #18 item 10): GPX
    /// carries them as Garmin's `gpxtpx:course`, GeoJSON as `properties.headings`, each equal to the library's
    /// resampled heading; a wider window turns the real track's corners more gently.
    @Test func smoothingChangesTheHeadingsWritten() throws {
        let track = TestData.path("geo/sf_30km_h.gpx")
        func courses(_ smoothing: String, _ ext: String) throws -> [Double] {
            let out = dir.appendingPathComponent("smooth-\(smoothing).\(ext)").path
            let r = try Shell.lapse([
                "route", "--input", track, "--spacing", "50", "--smoothing", smoothing, "-o", out, "-y"
            ])
            #expect(r.status == 0, "\(r.stderr)")
            let text = try String(contentsOfFile: out, encoding: .utf8)
            if ext == "gpx" {
                #expect(text.contains("xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v2\""))
                let pattern = try NSRegularExpression(pattern: "<gpxtpx:course>([0-9.]+)</gpxtpx:course>")
                return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                    Double(text[Range($0.range(at: 1), in: text)!])!
                }
            }
            let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            let properties = json?["properties"] as? [String: Any]
            return (properties?["headings"] as? [Double]) ?? []
        }
        let route = try RouteFile.read(URL(fileURLWithPath: track))
        for smoothing in ["5", "200"] {
            let expected = try route.resampled(every: 50, smoothing: Double(smoothing)!).map(\.heading)
            for ext in ["gpx", "geojson"] {
                let written = try courses(smoothing, ext)
                #expect(written.count == expected.count, "\(ext) \(smoothing)")
                #expect(zip(written, expected).allSatisfy { abs($0 - $1) <= 0.005 }, "\(ext) \(smoothing)")
            }
        }
        let narrow = try courses("5", "gpx")
        let wide = try courses("200", "gpx")
        let differences = zip(narrow, wide).map { abs((($0 - $1 + 540).truncatingRemainder(dividingBy: 360)) - 180) }
        #expect(differences.max() ?? 0 > 10, "\(differences.max() ?? 0)")
    }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    func json(_ result: ProcessResult) throws -> [String: Any] {
        try #require(try JSONSummary.parse(result.stdoutData), "stdout: \(result.stdout)")
    }

    /// Haversine on the 6 371 008.8 m sphere, written out here as an independent check of the tool's distances.
    static func haversine(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let r = 6_371_008.8
        let rad = Double.pi / 180
        let dLat = (b.0 - a.0) * rad
        let dLng = (b.1 - a.1) * rad
        let h = pow(sin(dLat / 2), 2) + cos(a.0 * rad) * cos(b.0 * rad) * pow(sin(dLng / 2), 2)
        return 2 * r * asin(min(1, h.squareRoot()))
    }

    /// [lat, lng] of a GeoJSON LineString Feature written by lapse.
    static func geojsonPoints(_ file: String) throws -> [(Double, Double)] {
        let object =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        let geometry = try #require(object?["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "LineString")
        let coordinates = try #require(geometry["coordinates"] as? [[Double]])
        return coordinates.map { ($0[1], $0[0]) }
    }

    @Test func realGPXFileReadsFully() throws {
        let out = path("sf.geojson")
        let result = try Shell.lapse(["route", "--input", TestData.path("geo/sf_30km_h.gpx"), "-o", out, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try json(result)
        #expect(summary["points"] as? Int == 49)
        #expect(summary["provider"] as? String == "file")
        let points = try Self.geojsonPoints(out)
        #expect(points.count == 49)
        let length = zip(points, points.dropFirst()).reduce(0) { $0 + Self.haversine($1.0, $1.1) }
        let reported = try #require(summary["distance_m"] as? Double)
        #expect(abs(length - reported) < 0.01)
        #expect(abs((summary["distance_km"] as? Double ?? 0) - (length / 1000 * 100).rounded() / 100) < 1e-9)
        // Plain summary: distance, points, provider on stdout.
        let plain = try Shell.lapse(["route", "--input", TestData.path("geo/sf_30km_h.gpx"), "-o", path("sf.gpx")])
        #expect(plain.status == 0)
        #expect(
            plain.stdout == "\(path("sf.gpx")): \(String(format: "%.2f", length / 1000)) km, 49 points, provider file\n"
        )
        // --route, as hyperlapse and preview name it, reads the same file.
        let named = try Shell.lapse(["route", "--route", TestData.path("geo/sf_30km_h.gpx"), "-o", path("sf-route.gpx")]
        )
        #expect(named.status == 0, "\(named.stderr)")
        #expect(
            FileManager.default.contents(atPath: path("sf-route.gpx"))
                == FileManager.default.contents(atPath: path("sf.gpx")))
    }

    @Test func resamplingEveryTenMetres() throws {
        let out = path("sf10.geojson")
        let result = try Shell.lapse([
            "route", "--input", TestData.path("geo/sf_30km_h.gpx"), "--spacing", "10", "-o", out, "--json"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try json(result)
        let total = try #require(summary["distance_m"] as? Double)
        let points = try Self.geojsonPoints(out)
        #expect(summary["points"] as? Int == points.count)
        #expect(points.count == Int((total / 10).rounded(.up)) + 1)
        // Straight-line gaps never exceed the 10 m path spacing (chords are at most the arc; the file keeps 7 decimals,
        // about 1 cm), and most are 10 ± 0.5 m.
        let gaps = zip(points, points.dropFirst()).map { Self.haversine($0.0, $0.1) }
        #expect(gaps.dropLast().allSatisfy { $0 <= 10.02 })
        #expect(gaps.dropLast().filter { abs($0 - 10) <= 0.5 }.count >= gaps.count * 9 / 10)
    }

    @Test func googleTorontoMontrealThroughTheStandIn() throws {
        let server = try LocalServer(script: "directions_standin.py")
        let out = path("tm.geojson")
        let keyFile = path("key.txt")
        try Data("\(Self.key)\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        let result = try Shell.lapse(
            [
                "route", "--from", "43.6533961,-79.3827986", "--to", "45.5017123,-73.5672184",
                "--key-file", keyFile, "--google-url", server.baseURL + "/toronto_montreal", "-o", out, "--json"
            ],
            environment: ["GOOGLE_MAPS_API_KEY": ""])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try json(result)
        #expect(summary["provider"] as? String == "google")
        #expect(summary["reported_distance_m"] as? Double == 540_543)
        let km = try #require(summary["distance_km"] as? Double)
        #expect(abs(km - 540.543) / 540.543 < 0.01, "\(km) km")
        let points = try Self.geojsonPoints(out)
        #expect(points.count == summary["points"] as? Int)
        #expect(Self.haversine(points[0], (43.6533961, -79.3827986)) < 5)
        #expect(!result.stderr.contains(Self.key) && !result.stdout.contains(Self.key))
        // Google's terms let route coordinates be kept 30 days at most: the file says when it was retrieved and
        // until when it may be kept, and so does a warning (issue #43, item 5).
        #expect(
            result.stderr.contains(
                "warning: \(out): Route from Google Maps Platform (Routes API), retrieved 20"),
            "\(result.stderr)")
        #expect(result.stderr.contains("allow keeping its coordinates for at most 30 days: delete or plan it again by"))
        let properties = try #require(
            (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])?[
                "properties"] as? [String: Any])
        let retrieved = try #require(ISO8601DateFormatter().date(from: properties["retrieved"] as? String ?? ""))
        #expect(abs(retrieved.timeIntervalSinceNow) < 600)
        let until = ISO8601DateFormatter().string(from: retrieved.addingTimeInterval(30 * 86_400)).prefix(10)
        #expect((properties["notice"] as? String)?.hasSuffix("plan it again by \(until).") == true, "\(properties)")
        // The environment variable and the LAPSE_GOOGLE_ROUTES_URL override work too.
        let viaEnv = try Shell.lapse(
            [
                "route", "--from", "43.6533961,-79.3827986", "--to", "45.5017123,-73.5672184",
                "-o", path("tm2.gpx"), "--quiet"
            ],
            environment: [
                "GOOGLE_MAPS_API_KEY": Self.key,
                "LAPSE_GOOGLE_ROUTES_URL": server.baseURL + "/toronto_montreal"
            ])
        #expect(viaEnv.status == 0, "\(viaEnv.stderr)")
        #expect(viaEnv.stdout.isEmpty && viaEnv.stderr.isEmpty)
        let gpx = try String(contentsOfFile: path("tm2.gpx"), encoding: .utf8)
        #expect(
            gpx.contains("<metadata>\n    <desc>Route from Google Maps Platform (Routes API), retrieved "),
            "\(gpx.prefix(400))")
        #expect(try RouteFile.read(URL(fileURLWithPath: path("tm2.gpx"))).points.count == points.count)
        // Both went to the Routes API (POST, key in a header), none to the legacy Directions API.
        let log = try Shell.run("curl", ["-s", server.baseURL + "/_requests"]).stdout
        #expect(
            log.components(separatedBy: "directions/v2:computeRoutes").count == 3
                && !log.contains("maps/api/directions"), "\(log)")
    }

    /// A saved Routes API or Directions answer (`curl … > answer.json`) is a route file.
    @Test func savedGoogleAnswerIsARouteFile() throws {
        let legacy = TestData.path(
            "streetview/googlemaps_openapi_spec/maps_http_directions_toronto_montreal_response.json")
        let result = try Shell.lapse(["route", "--input", legacy, "-o", path("saved.geojson"), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let km = try #require(try json(result)["distance_km"] as? Double)
        #expect(abs(km - 540.543) / 540.543 < 0.01, "\(km) km")
    }

    @Test func routesAPIErrorsAreOneLineWithoutTheKey() throws {
        let server = try LocalServer(script: "directions_standin.py")
        for (scenario, reason) in [
            ("disabled", "the Routes API is not enabled for this key's project"),
            ("bad_key", "the API key was refused"), ("no_route", "no route between these points")
        ] {
            let result = try Shell.lapse(
                [
                    "route", "--from", "1,2", "--to", "3,4", "--google-url", server.baseURL + "/" + scenario,
                    "-o", path("x.geojson")
                ], environment: ["GOOGLE_MAPS_API_KEY": Self.key])
            #expect(result.status == 1)
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(
                result.stderr.hasPrefix(
                    "error: Google Routes API http://127.0.0.1:\(server.port)/\(scenario)/directions/v2:computeRoutes: "
                ), "\(result.stderr)")
            #expect(result.stderr.contains(reason), "\(result.stderr)")
            #expect(!result.stderr.contains(Self.key))
            #expect(!FileManager.default.fileExists(atPath: path("x.geojson")))
        }
    }

    @Test func googleErrorsAreOneLineWithoutTheKey() throws {
        let server = try LocalServer(script: "directions_standin.py")
        for (scenario, reason) in [
            ("zero_results", "no route between these points (ZERO_RESULTS)"),
            (
                "status_REQUEST_DENIED",
                """
                (REQUEST_DENIED); the Directions API is a legacy API that new Google Cloud projects cannot \
                enable: use --provider google (the Routes API) instead, or check the key: Request for \
                key=[redacted] failed
                """
            ),
            ("over_query_limit", "(OVER_QUERY_LIMIT): Please wait.")
        ] {
            let result = try Shell.lapse(
                [
                    "route", "--from", "1,2", "--to", "3,4", "--provider", "google-directions",
                    "--google-url", server.baseURL + "/" + scenario,
                    "-o", path("x.geojson")
                ], environment: ["GOOGLE_MAPS_API_KEY": Self.key])
            #expect(result.status == 1)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(
                result.stderr.hasPrefix(
                    "error: Google Directions http://127.0.0.1:\(server.port)/\(scenario)/maps/api/directions/json?…: ")
            )
            #expect(result.stderr.contains(reason), "\(result.stderr)")
            #expect(!result.stderr.contains(Self.key))
            #expect(!FileManager.default.fileExists(atPath: path("x.geojson")))
        }
    }

    @Test(arguments: [("google", "/routes"), ("google-directions", "/synthetic")])
    func sixtyViaPointsThroughTheStandIn(provider: String, scenario: String) throws {
        let server = try LocalServer(script: "directions_standin.py")
        var args = [
            "route", "--from", "45.4215,-75.6972", "--to", "45.8,-75.3", "--provider", provider,
            "--google-url", server.baseURL + scenario, "-o", path("many-\(provider).geojson"), "--json"
        ]
        for i in 1...60 { args += ["--via", "\(45.4215 + Double(i) * 0.006),\(-75.6972 + Double(i) * 0.0066)"] }
        let result = try Shell.lapse(args, environment: ["GOOGLE_MAPS_API_KEY": Self.key])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try json(result)
        #expect(summary["requests"] as? Int == 3)
        #expect(summary["provider"] as? String == provider)
        let points = try Self.geojsonPoints(path("many-\(provider).geojson"))
        #expect(points.count == 62 + 61)
        for (a, b) in zip(points, points.dropFirst()) { #expect(a != b) }
    }

    @Test func osrmThroughTheStandIn() throws {
        let server = try LocalServer(script: "directions_standin.py")
        let result = try Shell.lapse([
            "route", "--provider", "osrm", "--from", "52.5163,13.3777", "--to", "52.5079,13.3376",
            "--osrm-url", server.baseURL + "/osrm", "--spacing", "25", "-o", path("b.gpx"), "--json"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try json(result)
        #expect(summary["provider"] as? String == "osrm")
        let straight = Self.haversine((52.5163, 13.3777), (52.5079, 13.3376))
        #expect(abs((summary["distance_m"] as? Double ?? 0) - straight) < 0.05)
        #expect(summary["points"] as? Int == Int((straight / 25).rounded(.up)) + 1)
        let gpx = try String(contentsOfFile: path("b.gpx"), encoding: .utf8)
        #expect(gpx.components(separatedBy: "<trkpt ").count - 1 == summary["points"] as? Int)
        #expect(!gpx.contains("<metadata>") && !result.stderr.contains("retrieved")) // OpenStreetMap's: no limit
        let noRoute = try Shell.lapse([
            "route", "--provider", "osrm", "--from", "1,2", "--to", "3,4",
            "--osrm-url", server.baseURL + "/osrm_noroute", "-o", path("n.gpx")
        ])
        #expect(noRoute.status == 1)
        #expect(noRoute.stderr.contains("no route between these points (NoRoute)"))
    }

    @Test(arguments: [
        (
            "truncated.gpx",
            """
            <?xml version=\"1.0\"?>\n<gpx version=\"1.1\"><trk><trkseg>\n<trkpt lat=\"1\" lon=\"2\"/>\n<trkpt \
            lat=\"1.1\" lon=\"2.1\"><ele>3
            """,
            "XML ends early (truncated?)"
        ),
        (
            "nocoords.geojson", "{\"type\":\"Feature\",\"properties\":{},\"geometry\":{\"type\":\"LineString\"}}",
            "LineString without coordinates"
        ),
        (
            "lat91.gpx", "<gpx><trk><trkseg><trkpt lat=\"91\" lon=\"0\"/></trkseg></trk></gpx>",
            "latitude 91 is outside -90…90"
        ),
        ("lat91.txt", "45,7\n91,7\n", "line 2: latitude 91 is outside -90…90"),
        ("broken.polyline", "_p~iF~ps|U_ulLnnqC_mqNvxq`", "encoded polyline ends inside a value"),
        ("empty.gpx", "<?xml version=\"1.0\"?><gpx version=\"1.1\"></gpx>", "no route points"),
        (
            "empty.geojson", "{\"type\":\"FeatureCollection\",\"features\":[]}",
            "no LineString or MultiLineString coordinates"
        ),
        ("blank.txt", "", "the file is empty")
    ])
    func malformedInputIsOneLineExitOne(name: String, content: String, problem: String) throws {
        let file = path(name)
        try Data(content.utf8).write(to: URL(fileURLWithPath: file))
        let result = try Shell.lapse(["route", "--input", file, "-o", path("out-\(name).geojson")])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr == "error: \(file): \(problem)"
                + String(result.stderr.dropFirst("error: \(file): \(problem)".count)))
        #expect(result.stderr.contains(problem), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: path("out-\(name).geojson")))
    }

    @Test(arguments: [
        (["--from", "91,0", "--to", "1,1", "-o", "x.gpx"], "--from latitude 91 is outside -90…90"),
        (["--from", "1,0", "-o", "x.gpx"], "give both --from and --to"),
        (["-o", "x.gpx"], "no route: give --from and --to, or --input FILE"),
        (["--input", "a.gpx", "--from", "1,1", "--to", "2,2", "-o", "x.gpx"], "either --input or --from"),
        (["--input", "a.gpx"], "no output (-o FILE.gpx"),
        (["--input", "a.gpx", "-o", "x.kml"], "must end in .gpx or .geojson"),
        (["--input", "a.gpx", "-o", "x.gpx", "--spacing", "0"], "--spacing takes a number"),
        (["--input", "a.gpx", "-o", "x.gpx", "--frobnicate"], "unknown option --frobnicate"),
        (
            ["--from", "1,1", "--to", "2,2", "--provider", "here", "-o", "x.gpx"],
            "--provider takes one of google, google-directions, osrm"
        ),
        (
            ["--from", "1,1", "--to", "2,2", "--provider", "osrm", "--osrm-url", "localhost:5000", "-o", "x.gpx"],
            "--osrm-url takes an http(s) URL"
        ),
        (["--from", "1,1", "--to", "2,2", "-o", "x.gpx"], "no Google Maps API key")
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let result = try Shell.lapse(["route"] + arguments, environment: ["GOOGLE_MAPS_API_KEY": ""])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.contains("usage: lapse route"))
    }

    @Test func keepsExistingOutputsUnlessOverwrite() throws {
        let out = path("exists.gpx")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: out))
        let result = try Shell.lapse(["route", "--input", TestData.path("geo/sf_30km_h.gpx"), "-o", out])
        #expect(result.status == 1)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "keep me")
        let again = try Shell.lapse(["route", "--input", TestData.path("geo/sf_30km_h.gpx"), "-o", out, "--overwrite"])
        #expect(again.status == 0)
        let missingKeyFile = try Shell.lapse([
            "route", "--from", "1,1", "--to", "2,2", "--key-file", path("nope.txt"), "-o", path("k.gpx")
        ])
        #expect(missingKeyFile.status == 1)
        #expect(missingKeyFile.stderr == "error: \(path("nope.txt")): no such key file\n")
    }

    /// A generated 150 000-point GPX (≈ 38 MB) is parsed as a stream: the `lapse` process's peak RSS grows by far
    /// less than the file's size compared with reading a 49-point file (peak RSS from getrusage of the child).
    @Test func largeGPXWithBoundedMemory() throws {
        let big = path("big.gpx")
        try Self.writeLargeGPX(big, points: 150_000)
        defer { // 38 MB and its 150 000-point output
            try? FileManager.default.removeItem(atPath: big)
            try? FileManager.default.removeItem(atPath: path("big.geojson"))
        }
        let fileSize = try #require(try FileManager.default.attributesOfItem(atPath: big)[.size] as? Int)
        #expect(fileSize > 35_000_000)
        /// Runs lapse under python3 and returns the child's peak RSS (kB), its exit status and its stdout.
        func peakKB(_ input: String, _ output: String) throws -> (kB: Int, status: Int32, stdout: Data) {
            let script =
                "import resource,subprocess,sys\nr=subprocess.run(sys.argv[1:],capture_output=True)\n"
                + "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
                + "+'\\n'+r.stdout.decode())\n"
                + "sys.exit(r.returncode)"
            let result = try Shell.run(
                "python3", ["-c", script, Shell.lapseBinary, "route", "--input", input, "-o", output, "--json"])
            let lines = result.stdout.split(separator: "\n", maxSplits: 1)
            return (Int(lines.first ?? "") ?? -1, result.status, Data((lines.count > 1 ? lines[1] : "").utf8))
        }
        let small = try peakKB(TestData.path("geo/sf_30km_h.gpx"), path("small.geojson"))
        let large = try peakKB(big, path("big.geojson"))
        #expect(small.status == 0 && large.status == 0)
        let summary = try JSONSummary.parse(large.stdout)
        #expect(summary?["points"] as? Int == 150_000)
        let growthKB = large.kB - small.kB
        // 150 000 points held as values need ~7 MB; a DOM or the whole file in memory would need more than the file.
        #expect(
            growthKB > 0 && growthKB * 1024 < fileSize / 2,
            "peak RSS grew by \(growthKB) kB for a \(fileSize / 1024) kB file")
    }

    static func writeLargeGPX(_ path: String, points: Int) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        var chunk =
            """
            <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"test\" \
            xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk><trkseg>\n
            """
        for i in 0..<points {
            let lat = 40 + Double(i) * 3e-5
            let lng = -100 + Double(i) * 4e-5
            let s = 1_600_000_000 + i
            chunk +=
                """
                <trkpt lat=\"\(lat)\" \
                lon=\"\(lng)\"><ele>\(Double(i % 1000) / 4)</ele>\
                <time>2020-09-13T\(s / 3600 % 24 < 10 ? "0" : "")\(s / 3600 % 24):\
                \(String(format: "%02d:%02d", s / 60 % 60, s % 60))Z</time>\
                <extensions><speed>13.9</speed><note>padding padding padding padding padding padding padding padding \
                padding padding padding padding</note></extensions></trkpt>\n
                """
            if chunk.utf8.count > 1 << 20 {
                try handle.write(contentsOf: Data(chunk.utf8))
                chunk = ""
            }
        }
        chunk += "</trkseg></trk>\n</gpx>\n"
        try handle.write(contentsOf: Data(chunk.utf8))
        try handle.close()
    }
}
