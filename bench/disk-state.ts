import { readdirSync, readFileSync } from 'node:fs'

// The disk's state around a measurement whose latency waits on fsync: what the kernel still has
// to write back, and how much the disks wrote meanwhile (the other scenarios' services and
// PostgreSQL share them). Linux only; elsewhere both read as NaN.

// Dirty and Writeback of /proc/meminfo, in MiB.
export function unwrittenMiB (): number {
  try {
    const meminfo = readFileSync('/proc/meminfo', 'utf8')
    const kibOf = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(meminfo)?.[1] ?? Number.NaN)
    return (kibOf('Dirty') + kibOf('Writeback')) / 1024
  } catch {
    return Number.NaN
  }
}

// MiB written so far by the whole disks (not their partitions, not loop or RAM devices, and not
// devices built on others, such as LVM's or RAID's, whose writes their disks count again), from
// /proc/diskstats: its tenth field counts 512-byte sectors written. Host-wide in a container.
export function writtenMiB (): number {
  try {
    const disks = new Set(readdirSync('/sys/block').filter((name) => !/^(loop|ram|zram)/.test(name) && !builtOnOthers(name)))
    let sectors = 0
    for (const line of readFileSync('/proc/diskstats', 'utf8').split('\n')) {
      const fields = line.trim().split(/\s+/)
      if (disks.has(fields[2] ?? '')) sectors += Number(fields[9])
    }
    return sectors * 512 / 2 ** 20
  } catch {
    return Number.NaN
  }
}

function builtOnOthers (device: string): boolean {
  try {
    return readdirSync(`/sys/block/${device}/slaves`).length > 0
  } catch {
    return false
  }
}
