// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import TestSupport
import Testing

@Suite struct RouteFileTests {
    let dir = TestData.scratchDirectory("lapse-geo")

    func file(_ name: String, _ text: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The real San Francisco track (gpx.studio, GPX 1.1 with Garmin extensions): one trk, one trkseg, 49 trkpt.
    @Test func realGPXReadsFully() throws {
        let path = TestData.path("geo/sf_30km_h.gpx")
        let route = try RouteFile.read(URL(fileURLWithPath: path))
        #expect(route.points.count == 49)
        #expect(route.name == "New file 1")
        let first = try #require(route.points.first)
        #expect(first.coordinate == (try Coordinate(latitude: 37.793585, longitude: -122.461396)))
        #expect(first.elevation == 94.75)
        #expect(first.time == ISO8601DateFormatter().date(from: "2025-03-14T07:00:00Z"))
        // Independent count and last point straight from the text.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.components(separatedBy: "<trkpt ").count - 1 == 49)
        let lastLat = text.components(separatedBy: "<trkpt lat=\"").last!.prefix { $0 != "\"" }
        #expect(route.points.last!.coordinate.latitude == Double(lastLat))
        #expect(route.points.allSatisfy { $0.elevation != nil && $0.time != nil })
    }

    @Test func gpx10RoutesAndSeveralSegments() throws {
        let gpx10 = try file(
            "r.gpx",
            """
            <?xml version="1.0"?>
            <gpx version="1.0" creator="x" xmlns="http://www.topografix.com/GPX/1/0">
              <wpt lat="1" lon="1"><name>not part of the path</name></wpt>
              <rte><name>Route A</name>
                <rtept lat="45.5" lon="-73.5"><ele>30</ele></rtept>
                <rtept lat="45.6" lon="-73.6"/>
              </rte>
            </gpx>
            """)
        let r = try RouteFile.read(URL(fileURLWithPath: gpx10))
        #expect(r.name == "Route A")
        #expect(
            r.coordinates == [
                try Coordinate(latitude: 45.5, longitude: -73.5), try Coordinate(latitude: 45.6, longitude: -73.6)
            ])
        #expect(r.points[0].elevation == 30 && r.points[1].elevation == nil)

        let segments = try file(
            "s.gpx",
            """
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">
              <rte><rtept lat="0" lon="0"/></rte>
              <trk><name>T</name>
                <trkseg><trkpt lat="1" lon="2"><time>2024-01-02T03:04:05.5Z</time></trkpt>\
                <trkpt lat="1.1" lon="2.1"/></trkseg>
                <trkseg><trkpt lat="1.2" lon="2.2"><ele> 12.5 </ele>\
                <extensions><ele>999</ele></extensions></trkpt></trkseg>
              </trk>
              <trk><trkseg><trkpt lat="1.3" lon="2.3"/></trkseg></trk>
            </gpx>
            """)
        let s = try RouteFile.read(URL(fileURLWithPath: segments))
        #expect(s.points.map(\.coordinate.latitude) == [1, 1.1, 1.2, 1.3]) // tracks win over the route
        #expect(s.points[2].elevation == 12.5) // the ele inside extensions is ignored
        #expect(s.points[0].time == Date(timeIntervalSince1970: 1_704_164_645.5))
        #expect(s.name == "T")
    }

    @Test func geojsonShapes() throws {
        let line = try file("a.geojson", #"{"type":"LineString","coordinates":[[-79.38,43.65,76.5],[-73.56,45.5]]}"#)
        let r = try RouteFile.read(URL(fileURLWithPath: line))
        #expect(
            r.coordinates == [
                try Coordinate(latitude: 43.65, longitude: -79.38), try Coordinate(latitude: 45.5, longitude: -73.56)
            ])
        #expect(r.points[0].elevation == 76.5)

        let collection = try file(
            "b.json",
            """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","properties":{"name":"first"},"geometry":{"type":"Point","coordinates":[0,0]}},
              {"type":"Feature","properties":{"coordTimes":["2024-01-01T00:00:00Z","2024-01-01T00:00:10Z"]},
               "geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}},
              {"type":"Feature","properties":null,\
              "geometry":{"type":"MultiLineString","coordinates":[[[5,6],[7,8]],[[9,10]]]}},
              {"type":"Feature","properties":{},\
              "geometry":{"type":"GeometryCollection","geometries":[{"type":"LineString","coordinates":[[11,12]]}]}}
            ]}
            """)
        let c = try RouteFile.read(URL(fileURLWithPath: collection))
        #expect(c.points.map(\.coordinate.latitude) == [2, 4, 6, 8, 10, 12])
        #expect(c.points.map(\.coordinate.longitude) == [1, 3, 5, 7, 9, 11])
        #expect(c.points[1].time!.timeIntervalSince(c.points[0].time!) == 10)
        #expect(c.name == "first")
    }

    @Test func kmlLineStrings() throws {
        let kml = try file(
            "k.kml",
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document>
              <Placemark><name>Drive</name><LineString><tessellate>1</tessellate>
                <coordinates>
                  -122.0822035425683,37.42228990140251,0 -122.0822,37.4223
                  -122.08,37.43,10
                </coordinates></LineString></Placemark>
              <Placemark><Point><coordinates>1,1</coordinates></Point></Placemark>
            </Document></kml>
            """)
        let r = try RouteFile.read(URL(fileURLWithPath: kml))
        #expect(r.name == "Drive")
        #expect(r.points.count == 3)
        #expect(r.points[0].coordinate.longitude == -122.0822035425683)
        #expect(r.points[2].elevation == 10)
    }

    @Test func linesAndPolylineFiles() throws {
        let lines = try file("p.txt", "# a comment\n43.65,-79.38\n\n 45.50 , -73.56 , 20\n")
        let r = try RouteFile.read(URL(fileURLWithPath: lines))
        #expect(r.points.count == 2 && r.points[1].elevation == 20)
        let poly = try file("p.polyline", "_p~iF~ps|U_ulLnnqC_mqNvxq`@\n")
        #expect(try RouteFile.read(URL(fileURLWithPath: poly)).points.count == 3)
        let poly6 = try file("p.polyline6", "_izlhA~rlgdF_{geC~ywl@_kwzCn`{nI")
        #expect(
            try RouteFile.read(URL(fileURLWithPath: poly6)).points.last!.coordinate
                == (try Coordinate(latitude: 43.252, longitude: -126.453)))
        // Without a known extension the content decides.
        let sniffedGPX = try file(
            "route.dat", "<?xml version=\"1.0\"?><gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"/></trkseg></trk></gpx>")
        #expect(try RouteFile.read(URL(fileURLWithPath: sniffedGPX)).points.count == 1)
        let sniffedPoly = try file("route.enc", "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
        #expect(try RouteFile.read(URL(fileURLWithPath: sniffedPoly)).points.count == 3)
        let sniffedLines = try file("route", "1,2\n3,4\n")
        #expect(try RouteFile.read(URL(fileURLWithPath: sniffedLines)).points.count == 2)
    }

    /// A coordinate given as text is a decimal number: a hex float is refused (issue #42); the route files' own
    /// cases are among `malformedInputNamesFileAndProblem`'s.
    @Test func onlyDecimalCoordinates() throws {
        #expect(throws: LapseError.self) { try Coordinate.parse("0x1p3,2") }
        #expect(try Coordinate.parse("+48.5,-2.25e0") == (try Coordinate(latitude: 48.5, longitude: -2.25)))
    }

    @Test func writersRoundTrip() throws {
        let t0 = Date(timeIntervalSince1970: 1_700_000_000.25)
        let route = Route(
            points: [
                TrackPoint(try Coordinate(latitude: 43.6532101, longitude: -79.3832), elevation: 76.25, time: t0),
                TrackPoint(
                    try Coordinate(latitude: -0.0000001, longitude: 179.9999999), elevation: -3,
                    time: t0.addingTimeInterval(61)),
                TrackPoint(
                    try Coordinate(latitude: 90, longitude: -180), elevation: nil, time: t0.addingTimeInterval(3600))
            ], name: "Tor & <Mtl> \"x\"")
        for ext in ["gpx", "geojson"] {
            let file = dir.appendingPathComponent("out.\(ext)")
            try RouteFile.write(route, to: file)
            // No overwrite by default.
            #expect(throws: LapseError.self) { try RouteFile.write(route, to: file) }
            try RouteFile.write(route, to: file, overwrite: true)
            let back = try RouteFile.read(file)
            #expect(back == route, "\(ext)")
        }
        // Files that other tools read: GeoJSON is valid JSON with [lon, lat] order.
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("out.geojson")))
            as! [String: Any]
        let coordinates = (json["geometry"] as! [String: Any])["coordinates"] as! [[Double]]
        #expect(coordinates[0] == [-79.3832, 43.6532101, 76.25])
        #expect(throws: LapseError.self) { try RouteFile.write(route, to: dir.appendingPathComponent("x.kml")) }
        // No stray temporary files.
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(names.allSatisfy { !$0.contains(".partial") })
    }

    /// A generated 150 000-point GPX: every point read, in order, with its elevation and time.
    /// (Bounded memory while parsing is measured on the `lapse` process in RouteCLITests.)
    @Test func largeGPXReadsEveryPoint() throws {
        let path = dir.appendingPathComponent("big.gpx").path
        try LargeGPX.write(path: path, points: 150_000)
        defer { try? FileManager.default.removeItem(atPath: path) } // 38 MB
        let route = try RouteFile.read(URL(fileURLWithPath: path))
        #expect(route.points.count == 150_000)
        #expect(route.points[0] == LargeGPX.point(0))
        #expect(route.points[77_777] == LargeGPX.point(77_777))
        #expect(route.points[149_999] == LargeGPX.point(149_999))
    }

    @Test(arguments: [
        (
            "truncated.gpx",
            """
            <?xml version=\"1.0\"?>\n<gpx version=\"1.1\"><trk><trkseg>\n<trkpt lat=\"1\" \
            lon=\"2\"><ele>3</ele></trkpt>\n<trkpt lat=\"1.1\" lo
            """,
            "truncated"
        ),
        (
            "lat91.gpx", "<gpx><trk><trkseg><trkpt lat=\"91\" lon=\"2\"/></trkseg></trk></gpx>",
            "latitude 91 is outside -90…90 at line 1"
        ),
        ("nolat.gpx", "<gpx><rte><rtept lon=\"2\"/></rte></gpx>", "without lat and lon"),
        ("badele.gpx", "<gpx><rte><rtept lat=\"1\" lon=\"2\"><ele>high</ele></rtept></rte></gpx>", "<ele> is 'high'"),
        ("empty.gpx", "<?xml version=\"1.0\"?><gpx version=\"1.1\"><metadata/></gpx>", "no route points"),
        ("notgpx.gpx", "<html><body/></html>", "not a GPX file"),
        ("zero.gpx", "", "empty"),
        ("nocoords.geojson", "{\"type\":\"LineString\"}", "LineString without coordinates"),
        ("point.geojson", "{\"type\":\"Point\",\"coordinates\":[1,2]}", "no LineString or MultiLineString coordinates"),
        ("emptyline.geojson", "{\"type\":\"LineString\",\"coordinates\":[]}", "line 1 has no coordinates"),
        (
            "lat91.geojson", "{\"type\":\"LineString\",\"coordinates\":[[0,0],[2,91]]}",
            "position 2 of line 1: latitude 91"
        ),
        ("broken.geojson", "{\"type\":\"LineString\",\"coordinates\":[[0,0],[2,", "not valid JSON"),
        ("lat91.txt", "1,2\n91,0\n", "line 2: latitude 91"),
        ("words.txt", "1,2\nhello\n", "line 2 is 'hello'"),
        ("empty.txt", "# nothing\n\n", "no route points"),
        ("broken.polyline", "_p~iF~ps|U_ulLnnqC_mqNvxq`", "ends inside a value"),
        (
            "bad.kml", "<kml><Placemark><LineString><coordinates>1,2 x,y</coordinates></LineString></Placemark></kml>",
            "coordinate 2"
        ),
        ("truncated.kml", "<kml><Placemark><LineString><coordinates>1,2 3,4", "truncated"),
        ("unknown.bin", "\u{1}\u{2}", "not a route file"),
        // Decimal numbers only, in every format: a hex float, `nan` or text after a NUL byte (issue #42).
        ("hex.txt", "1,2\n0x1p3,2\n", "line 2 is '0x1p3,2', not latitude,longitude"),
        ("nul.txt", "1,2\n3\u{0}9,4\n", "line 2 is"),
        ("nan.txt", "nan,2\n", "line 1 is 'nan,2'"),
        ("hex.gpx", "<gpx><trk><trkseg><trkpt lat=\"0x10\" lon=\"2\"/></trkseg></trk></gpx>", "not numbers"),
        (
            "ele.gpx", "<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><ele>inf</ele></trkpt></trkseg></trk></gpx>",
            "<ele> is 'inf', not a number"
        ),
        ("hex.kml", "<kml><LineString><coordinates>0x1p1,2 3,4</coordinates></LineString></kml>", "coordinate 1")
    ])
    func malformedInputNamesFileAndProblem(name: String, text: String, problem: String) throws {
        let path = try file(name, text)
        let error = #expect(throws: LapseError.self) { try RouteFile.read(URL(fileURLWithPath: path)) }
        #expect(error?.subject == path)
        #expect(error?.reason.contains(problem) == true, "\(String(describing: error))")
        #expect(error?.description.contains("\n") == false)
    }

    @Test func missingFile() {
        let error = #expect(throws: LapseError.self) { try RouteFile.read(URL(fileURLWithPath: "/nonexistent/x.gpx")) }
        #expect(error?.description == "/nonexistent/x.gpx: no such file")
    }
}

/// A synthetic long track: point i is 5 m north-east of point i-1 from (40, -100) … with elevation and time.
enum LargeGPX {
    static func point(_ i: Int) -> TrackPoint {
        let lat = 40 + Double(i) * 3e-5
        let lng = -100 + Double(i) * 4e-5
        return TrackPoint(
            try! Coordinate(latitude: (lat * 1e7).rounded() / 1e7, longitude: (lng * 1e7).rounded() / 1e7),
            elevation: Double(i % 1000) / 4, time: Date(timeIntervalSince1970: 1_600_000_000 + Double(i)))
    }

    static func write(path: String, points: Int) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        var chunk =
            """
            <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"test\" \
            xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk><trkseg>\n
            """
        let formatter = ISO8601DateFormatter()
        for i in 0..<points {
            let p = point(i)
            chunk +=
                """
                <trkpt lat=\"\(p.coordinate.latitude)\" \
                lon=\"\(p.coordinate.longitude)\"><ele>\(p.elevation!)</ele>\
                <time>\(formatter.string(from: p.time!))</time>\
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
