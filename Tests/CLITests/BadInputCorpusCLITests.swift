// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

/// The bad-input corpus: images, videos and route files derived from the shared real data — empty, cut short,
/// corrupted, mislabelled, declaring sizes too large to decode — run through the commands that read them. None
/// may crash or hang (each run has a minute); each either works (for damage a decoder can conceal) or exits 1
/// (64 for a usage error) with one line `error: INPUT: reason` naming the input, and leaves no output and no
/// temporary file behind.
@Suite struct BadInputCorpusCLITests {
    static let dir = TestData.scratchDirectory("lapse-bad-inputs")

    /// One bad input: the bytes, the name it is given, whether it must fail, and the commands it goes through.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        /// Damage no decoder can conceal (nothing to decode, or too large): the command must exit 1.
        let mustFail: Bool
        let commands: [[String]]
        var testDescription: String { name }
    }

    static func read(_ relative: String) -> [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: TestData.path(relative))))) ?? []
    }

    /// Every 97th byte from 5 % on inverted: data a decoder meets mid-stream.
    static func flipped(_ b: [UInt8]) -> [UInt8] {
        var out = b
        for i in stride(from: b.count / 20, to: b.count, by: 97) { out[i] = ~out[i] }
        return out
    }

    static let imageCommands: [[String]] = [["video", "INPUT", "-o", "OUT.mp4"], ["gif", "INPUT", "-o", "OUT.gif"]]
    static let videoCommands: [[String]] = [
        ["clip", "INPUT", "--start", "0", "--duration", "1", "-o", "OUT.mp4"],
        ["gif", "INPUT", "--duration", "1", "-o", "OUT.gif"]
    ]
    static let routeCommands: [[String]] = [["route", "--input", "INPUT", "-o", "OUT.gpx"]]

    static let cases: [Case] = {
        var cases: [Case] = []
        let images = [
            "images/pillow/hopper.jpg", "images/pillow/hopper.png", "images/pillow/hopper.webp",
            "images/pngsuite/basn6a16.png", "images/pngsuite/basi2c08.png", "images/pillow/pil_sample_cmyk.jpg",
            "images/pillow/transparent.webp", "images/exif-orientation-examples/Landscape_6.jpg",
            "images/pngsuite/basn3p08.png", "images/pngsuite/tbrn2c08.png", "images/pillow/pil123rgba.png"
        ]
        for source in images {
            let b = read(source)
            let base = (source as NSString).lastPathComponent
            let ext = (base as NSString).pathExtension
            let stem = (base as NSString).deletingPathExtension
            func add(_ kind: String, _ bytes: [UInt8], mustFail: Bool, ext e: String = ext) {
                cases.append(
                    Case(name: "\(stem)-\(kind).\(e)", bytes: bytes, mustFail: mustFail, commands: imageCommands))
            }
            add("empty", [], mustFail: true)
            add("1byte", Array(b.prefix(1)), mustFail: true)
            add("header", Array(b.prefix(16)), mustFail: true)
            add("half", Array(b.prefix(b.count / 2)), mustFail: true)
            add("90pc", Array(b.prefix(b.count * 9 / 10)), mustFail: ext != "webp")
            add("flipped", flipped(b), mustFail: false)
            add("zeroed", Array(b.prefix(64)) + [UInt8](repeating: 0, count: max(0, b.count - 64)), mustFail: false)
            add("misnamed", b, mustFail: false, ext: ext == "png" ? "jpg" : "png")
        }
        cases.append(
            Case(
                name: "animated.webp", bytes: read("images/pillow/iss634.webp"), mustFail: true, commands: imageCommands
            ))
        cases.append(
            Case(
                name: "huge.png", bytes: CraftedImages.png(width: 40000, height: 40000), mustFail: true,
                commands: imageCommands))
        cases.append(
            Case(
                name: "overflow.png", bytes: CraftedImages.png(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF), mustFail: true,
                commands: imageCommands))
        cases.append(
            Case(
                name: "rowless.png", bytes: CraftedImages.png(width: 640, height: 480), mustFail: true,
                commands: imageCommands))
        if let big = CraftedImages.jpeg(read("images/pillow/hopper.jpg"), width: 60000, height: 50000) {
            cases.append(Case(name: "huge.jpg", bytes: big, mustFail: true, commands: imageCommands))
        }
        cases.append(
            Case(name: "text.png", bytes: Array("just some words\n".utf8), mustFail: true, commands: imageCommands))

        let videos = [
            "video/synthetic/quadrants_320x180.mp4", "video/synthetic/gop4s_bframes_av_10s_faststart.mp4",
            "video/synthetic/alpha_vp9_160x120.webm", "video/synthetic/hdr10_pq_hevc10_320x180.mp4"
        ]
        for source in videos {
            let b = read(source)
            let base = (source as NSString).lastPathComponent
            let ext = (base as NSString).pathExtension
            let stem = (base as NSString).deletingPathExtension
            func add(_ kind: String, _ bytes: [UInt8], mustFail: Bool) {
                cases.append(
                    Case(name: "\(stem)-\(kind).\(ext)", bytes: bytes, mustFail: mustFail, commands: videoCommands))
            }
            add("empty", [], mustFail: true)
            add("1k", Array(b.prefix(1024)), mustFail: false)
            add("30pc", Array(b.prefix(b.count * 3 / 10)), mustFail: false)
            add("70pc", Array(b.prefix(b.count * 7 / 10)), mustFail: false)
            add("flipped", flipped(b), mustFail: false)
            add(
                "head-flipped",
                Array(b.prefix(64)) + flipped(Array(b.dropFirst(64).prefix(4096))) + Array(b.dropFirst(64 + 4096)),
                mustFail: false)
        }
        cases.append(
            Case(name: "photo.mp4", bytes: read("images/pillow/hopper.jpg"), mustFail: false, commands: videoCommands))
        cases.append(
            Case(
                name: "words.mp4", bytes: Array(String(repeating: "not a video ", count: 500).utf8), mustFail: true,
                commands: videoCommands))

        let gpx = String(decoding: read("geo/sf_30km_h.gpx"), as: UTF8.self)
        let routes: [(String, String)] = [
            ("empty.gpx", ""), ("cut.gpx", String(gpx.prefix(gpx.count / 2))), ("not-xml.gpx", "lat,lng\n1,2\n"),
            ("no-points.gpx", "<?xml version=\"1.0\"?><gpx version=\"1.1\"><trk><trkseg></trkseg></trk></gpx>"),
            (
                "one-point.gpx",
                "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"48.85\" lon=\"2.29\"/></trkseg></trk></gpx>"
            ),
            (
                "lat-999.gpx",
                """
                <gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"999\" lon=\"2.29\"/><trkpt lat=\"48.86\" \
                lon=\"2.30\"/></trkseg></trk></gpx>
                """
            ),
            (
                "nan.gpx",
                """
                <gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"nan\" lon=\"2.29\"/><trkpt lat=\"48.86\" \
                lon=\"2.30\"/></trkseg></trk></gpx>
                """
            ),
            ("broken.geojson", "{\"type\": \"LineString\", \"coordinates\": [[2.29, 48.85], [2.30"),
            ("point.geojson", "{\"type\": \"Point\", \"coordinates\": [2.29, 48.85]}"),
            ("strings.geojson", "{\"type\": \"LineString\", \"coordinates\": [[\"a\", \"b\"], [2.30, 48.86]]}"),
            ("lng-500.geojson", "{\"type\": \"LineString\", \"coordinates\": [[500, 48.85], [2.30, 48.86]]}"),
            ("bad.polyline", "_p~iF~ps|U_ulL\u{1}\u{2}~"), ("cut.polyline", "_p~iF~ps|U_ulLnnqC_mqNvxq`"),
            ("empty.kml", "<kml xmlns=\"http://www.opengis.net/kml/2.2\"><Document/></kml>"),
            ("words.txt", "first line\nsecond line\n"),
            ("binary.gpx", String(decoding: read("images/pillow/hopper.png"), as: UTF8.self))
        ]
        for (name, text) in routes {
            // One point is a route still (lapse panoramas fetches the panorama there).
            cases.append(
                Case(name: name, bytes: Array(text.utf8), mustFail: name != "one-point.gpx", commands: routeCommands))
        }
        return cases
    }()

    @Test(arguments: cases)
    func badInput(_ input: Case) throws {
        let folder = Self.dir.appendingPathComponent(input.name + ".d")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(input.name).path
        try Data(input.bytes).write(to: URL(fileURLWithPath: path))
        for (n, command) in input.commands.enumerated() {
            let out = folder.appendingPathComponent("out\(n)").path
            let arguments = command.map { $0 == "INPUT" ? path : $0.replacingOccurrences(of: "OUT", with: out) }
            let output = arguments[arguments.firstIndex(of: "-o")! + 1]
            let r = try Shell.run(
                "timeout",
                ["-s", "KILL", "60", Shell.lapseBinary] + arguments.prefix(1) + ["--quiet"] + arguments.dropFirst())
            let what = "\(input.name) through \(command[0]): status \(r.status), \(r.stderr)"
            #expect(r.status == 0 || r.status == 1 || r.status == 64, "crashed or hung: \(what)")
            if r.status == 0 {
                #expect(!input.mustFail, "should have failed: \(what)")
                #expect(FileManager.default.fileExists(atPath: output), "\(what)")
                try? FileManager.default.removeItem(atPath: output)
            } else {
                let lines = r.stderr.split(separator: "\n")
                #expect(lines.count == 1, "one line: \(what)")
                #expect(
                    r.stderr.hasPrefix("error: \(path): ") || r.stderr.hasPrefix("error: \(path):"),
                    "names the input: \(what)")
                #expect(!FileManager.default.fileExists(atPath: output), "no output: \(what)")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != input.name }
            #expect(left.isEmpty, "left behind: \(left), \(what)")
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// The corpus is as large as the (126 inputs): none of its parts went missing.
    @Test func corpusSize() {
        #expect(Self.cases.count >= 126, "\(Self.cases.count)")
        #expect(Self.cases.allSatisfy { !$0.commands.isEmpty })
    }
}
