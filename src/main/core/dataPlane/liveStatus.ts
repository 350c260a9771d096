// What a running router of this node reports about itself (the built-in edge router implements it).
/** What a running router reports about itself (implemented by the built-in edge router). */
export interface LiveStatus {
  id: string;
  url: string;
  online: boolean;
  connections: number;
  terminators: Array<{ id: string; serviceId: string; kind: 'sdk' | 'host'; identity: string; caller?: string; cost: number; precedence: string }>;
  circuits: Array<{
    id: string;
    serviceId: string;
    serviceName: string;
    terminatorId: string;
    caller: string;
    /** the dialing identity's id */
    callerId: string;
    hostKind: 'sdk' | 'tcp';
    createdAt: string;
    bytesIn: number;
    bytesOut: number;
  }>;
}

export interface LiveDataPlane {
  status(): LiveStatus;
}
