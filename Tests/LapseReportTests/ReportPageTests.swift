// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import TestSupport
import Testing

@testable import LapseReport

@Suite struct ReportPageTests {
    let dir = TestData.scratchDirectory("reportpage")

    /// Text from the panoramas' metadata (ids, dates, credits) is shown as text: markup in it neither ends the
    /// page's data nor adds elements; a one-point route and no frames draw without a script error.
    @Test func metadataIsShownAsText() throws {
        var report = HyperlapseReport(positionsKnown: true, pointUnit: "route points")
        let id = "</script><!--<script>pano\"'&"
        let date = "<img src=x onerror=\"document.title='hacked'\">"
        report.points = [
            HyperlapseReport.Point(index: 0, latitude: 48.85, longitude: 2.29, status: .panorama, pano: id)
        ]
        report.panoramas = [
            HyperlapseReport.Panorama(
                id: id, latitude: 48.85001, longitude: 2.29001, date: date, distance: 1.2,
                point: 0, credit: "© <b>Ann</b>")
        ]
        let summary = try JSONSerialization.data(
            withJSONObject: ["source": "</script>x", "panoramas": 1], options: [.sortedKeys])
        let page = dir.appendingPathComponent("escape.html").path
        let written = try ReportPage(title: "<i>t</i>", report: report, summaryJSON: summary, credits: ["© <b>Ann</b>"])
            .write(to: URL(fileURLWithPath: page), overwrite: true)
        #expect(written.thumbnails == 0)
        let embedded = try #require(try Browser.embeddedJSON(page, id: "lapse-report") as? [String: Any])
        #expect(((embedded["panoramas"] as? [[String: Any]])?.first?["id"] as? String) == id)
        let seen = try Browser.check(page, screenshot: dir.appendingPathComponent("escape.png").path)
        #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen["console_errors"] ?? "")")
        #expect((seen["popup_text"] as? String)?.contains(id) == true, "\(seen["popup_text"] ?? "")")
        #expect((seen["popup_text"] as? String)?.contains(date) == true)
        #expect(seen["images"] as? Int == 0) // no <img> made of the date
        #expect(seen["markers"] as? Int == 1 && (seen["route_paths"] as? Int ?? 0) == 1)
        #expect((seen["summary"] as? [String: String])?["source"] == "</script>x")
        #expect(seen["subtitle"] as? String == "1 route point, 1 panorama, 0 frames")
    }

    /// The summary table gives numbers with their units and sensible digits, the exact value kept in the cell
    /// (issue #45, item 17); the heading plot draws headings either side of north together: a camera turning from
    /// 358° to 2° past panoramas posed from 2° to 358° is one band, not two lines at opposite edges 360° apart, and
    /// the axis reads compass degrees (item 18).
    @Test func numbersHaveUnitsAndHeadingsAcrossNorthAreDrawnTogether() throws {
        var report = HyperlapseReport(positionsKnown: true, pointUnit: "route points")
        let cameras = [358.0, 359, 1, 2]
        let posed = [2.0, 1, 359, 358]
        let sources = [1.0, 0, 0, 359.5]
        report.points = (0..<4).map {
            HyperlapseReport.Point(
                index: $0, latitude: 48.85 + Double($0) * 1e-4, longitude: 2.29, status: .panorama, pano: "p\($0)")
        }
        report.panoramas = (0..<4).map {
            HyperlapseReport.Panorama(
                id: "p\($0)", latitude: 48.85 + Double($0) * 1e-4, longitude: 2.29, date: nil, distance: 1, point: $0,
                frame: $0)
        }
        report.frames = (0..<4).map {
            HyperlapseReport.Frame(
                index: $0, time: Double($0) / 12, pano: "p\($0)", point: $0, heading: cameras[$0], pitch: 0, fov: 90,
                sourcePanoHeading: sources[$0], panoHeading: posed[$0])
        }
        let values: [String: Any] = [
            "distance": 200.77141001702967, "seconds": 7.240355849266052, "bytes": 12615, "duration": 5,
            "speed": 2.5466, "fps": 12, "gif_bytes": 2_400_000, "frames": 60,
            "stabilization": ["travel_direction": -91.234, "consistent_share": 0.3034]
        ]
        let summary = try JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])
        let page = dir.appendingPathComponent("units.html").path
        try ReportPage(title: "units", report: report, summaryJSON: summary).write(
            to: URL(fileURLWithPath: page), overwrite: true)
        let seen = try Browser.check(page, screenshot: dir.appendingPathComponent("units.png").path)
        #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen["console_errors"] ?? "")")
        let text = try #require(seen["summary_text"] as? [String: String])
        #expect(
            text == [
                "distance": "200.8 m", "seconds": "7.2 s", "bytes": "12.6 kB", "duration": "5 s", "speed": "2.55×",
                "fps": "12 fps", "gif_bytes": "2.4 MB", "frames": "60", "stabilization.travel_direction": "-91.2°",
                "stabilization.consistent_share": "30 %"
            ], "\(text)")
        let exact = try #require(seen["summary"] as? [String: String])
        #expect(exact["distance"] == "200.77141001702967" && exact["seconds"] == "7.240355849266052")
        // Three series of four points; every point within the plot (y 12…214), all of them in one band.
        let lines = try #require(seen["heading_plot"] as? [[[Double]]])
        #expect(lines.count == 3 && lines.allSatisfy { $0.count == 4 })
        let ys = lines.flatMap { $0.map { $0[1] } }
        #expect(ys.allSatisfy { $0 >= 11.9 && $0 <= 214.1 })
        #expect(ys.max()! - ys.min()! <= 0.5 * (214 - 12), "\(ys)")
    }

    /// A page without a video has no thumbnails and makes no `PAGE_files` folder; written over a page that had
    /// thumbnails (`overwrite`), their folder goes with the old page; a folder holding anything else is left as it
    /// is and the page is not written.
    @Test func aPageWithoutThumbnailsMakesNoFolder() throws {
        let report = HyperlapseReport(positionsKnown: false, pointUnit: "video frames")
        let summary = Data("{}".utf8)
        let page = dir.appendingPathComponent("bare.html").path
        let files = ReportPage.filesDirectory(of: page)
        try? FileManager.default.removeItem(atPath: page)
        try? FileManager.default.removeItem(atPath: files)
        let written = try ReportPage(title: "t", report: report, summaryJSON: summary).write(
            to: URL(fileURLWithPath: page), overwrite: false)
        #expect(written.filesDirectory == nil && written.thumbnails == 0)
        #expect(FileManager.default.fileExists(atPath: page) && !FileManager.default.fileExists(atPath: files))
        // An earlier page's thumbnails: replaced with the page, so removed.
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: false)
        try Data([0xFF, 0xD8]).write(to: URL(fileURLWithPath: files + "/frame-00000.jpg"))
        try ReportPage(title: "again", report: report, summaryJSON: summary).write(
            to: URL(fileURLWithPath: page), overwrite: true)
        #expect(!FileManager.default.fileExists(atPath: files))
        #expect(try String(contentsOfFile: page, encoding: .utf8).contains("<title>again"))
        // Someone else's folder of that name: refused, untouched, the old page kept.
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: files + "/notes.txt"))
        #expect(throws: LapseError.self) {
            try ReportPage(title: "third", report: report, summaryJSON: summary).write(
                to: URL(fileURLWithPath: page), overwrite: true)
        }
        #expect(FileManager.default.fileExists(atPath: files + "/notes.txt"))
        #expect(try String(contentsOfFile: page, encoding: .utf8).contains("<title>again"))
    }

    /// Relative links from the page's folder: beside it, below it, above it; segments percent-encoded, a colon
    /// never read as a scheme.
    @Test func relativeLinks() {
        #expect(ReportPage.relative("/a/b/v.mp4", from: "/a/b") == "./v.mp4")
        #expect(ReportPage.relative("/a/b/c d/v#1.mp4", from: "/a/b") == "./c%20d/v%231.mp4")
        #expect(ReportPage.relative("/a/x/v.mp4", from: "/a/b/c") == "../../x/v.mp4")
        #expect(ReportPage.relative("/a/b/c:d.mp4", from: "/a/b") == "./c%3Ad.mp4")
    }
}
