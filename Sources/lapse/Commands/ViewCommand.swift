// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

enum ViewCommand: Command {
    static let name = "view"
    static let summary = "Render one perspective view of an equirectangular panorama (not yet built)"
    static let help = """
        lapse view [options]

        Render one perspective view of an equirectangular panorama (not yet built)
        """
    static func run(_ arguments: inout Arguments, console: Console) async throws {
        throw LapseError(.other, nil, "lapse view is not built yet")
    }
}
