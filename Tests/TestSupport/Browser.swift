// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A real browser for pages Lapse writes: headless Chromium (Debian's `chromium` and `chromium-driver`) driven by
/// `Tests/Browser/check_page.py` with Debian's `python3-selenium`, all installed by `make test`.
public enum Browser {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser/check_page.py").path

    /// Loads `page` and returns what the script measured (see the script), saving a screenshot at `screenshot`
    /// (and of the video element after a thumbnail was clicked at `videoAfterClick`).
    public static func check(_ page: String, screenshot: String, videoAfterClick: String? = nil) throws -> [String: Any]
    {
        let result = try Shell.run(
            "/usr/bin/python3", [script, page, screenshot] + (videoAfterClick.map { [$0] } ?? []))
        guard result.status == 0,
            let object = try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any]
        else {
            throw ReferenceError(message: "the browser check of \(page) failed (\(result.status)): \(result.stderr)")
        }
        return object
    }

    /// The JSON a page carries in its `<script type="application/json" id="ID">` element.
    public static func embeddedJSON(_ page: String, id: String) throws -> Any {
        let html = try String(contentsOfFile: page, encoding: .utf8)
        guard let start = html.range(of: "<script type=\"application/json\" id=\"\(id)\">"),
            let end = html.range(of: "</script>", range: start.upperBound..<html.endIndex)
        else {
            throw ReferenceError(message: "\(page) has no \(id) data")
        }
        return try JSONSerialization.jsonObject(with: Data(html[start.upperBound..<end.lowerBound].utf8))
    }
}
