// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Paths to the shared real data (`../shared/data` beside the project) and to scratch space.
public enum TestData {
    /// The project root (the folder holding Package.swift), found from this source file's path.
    public static let projectRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// `../shared/data`, or `LAPSE_SHARED_DATA` when set.
    public static let root: URL = {
        if let env = ProcessInfo.processInfo.environment["LAPSE_SHARED_DATA"] { return URL(fileURLWithPath: env) }
        return projectRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
    }()

    /// A path under the shared data folder, e.g. `path("images/pngsuite/basn6a08.png")`.
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// A fresh empty directory for one test; removed by the caller or left in /tmp.
    public static func scratchDirectory(_ name: String = "lapse-test") -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
