// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
@testable import LapseReport
import Testing
import TestSupport

@Suite struct ReportPageTests {
    let dir = TestData.scratchDirectory("reportpage")

    /// Text from the panoramas' metadata (ids, dates, credits) is shown as text: markup in it neither ends the
    /// page's data nor adds elements; a one-point route and no frames draw without a script error.
    @Test func metadataIsShownAsText() throws {
        var report = HyperlapseReport(positionsKnown: true, pointUnit: "route points")
        let id = "</script><!--<script>pano\"'&", date = "<img src=x onerror=\"document.title='hacked'\">"
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
            .write(to: page, overwrite: true)
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

    /// A page without a video has no thumbnails and makes no `PAGE_files` folder; written over a page that had
    /// thumbnails (`overwrite`), their folder goes with the old page; a folder holding anything else is left as it
    /// is and the page is not written.
    @Test func aPageWithoutThumbnailsMakesNoFolder() throws {
        let report = HyperlapseReport(positionsKnown: false, pointUnit: "video frames")
        let summary = Data("{}".utf8)
        let page = dir.appendingPathComponent("bare.html").path, files = ReportPage.filesDirectory(of: page)
        try? FileManager.default.removeItem(atPath: page)
        try? FileManager.default.removeItem(atPath: files)
        let written = try ReportPage(title: "t", report: report, summaryJSON: summary).write(to: page, overwrite: false)
        #expect(written.filesDirectory == nil && written.thumbnails == 0)
        #expect(FileManager.default.fileExists(atPath: page) && !FileManager.default.fileExists(atPath: files))
        // An earlier page's thumbnails: replaced with the page, so removed.
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: false)
        try Data([0xFF, 0xD8]).write(to: URL(fileURLWithPath: files + "/frame-00000.jpg"))
        try ReportPage(title: "again", report: report, summaryJSON: summary).write(to: page, overwrite: true)
        #expect(!FileManager.default.fileExists(atPath: files))
        #expect(try String(contentsOfFile: page, encoding: .utf8).contains("<title>again"))
        // Someone else's folder of that name: refused, untouched, the old page kept.
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: files + "/notes.txt"))
        #expect(throws: LapseError.self) {
            try ReportPage(title: "third", report: report, summaryJSON: summary).write(to: page, overwrite: true)
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
