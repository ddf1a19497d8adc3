// SPDX-License-Identifier: GPL-3.0-or-later

/// Lapse's version, as `lapse --version` prints it.
public let lapseVersion = "0.1.0"

/// The `User-Agent` every request of Lapse carries: `lapse/VERSION` (services such as the OSRM demo server ask
/// clients to identify themselves).
public let lapseUserAgent = "lapse/\(lapseVersion)"
